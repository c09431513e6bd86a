"""Write ``datasets`` folders (``save_to_disk`` layout) straight from Arrow record batches.

``Dataset.save_to_disk`` copies a whole table that has to be opened first (memory-mapped:
its pages count in the process's RSS), so a multi-GB forum would need as much memory. Here
batches go straight into the shard file, and the two small JSON files ``load_from_disk``
reads are written beside it, in the layout of datasets 5 (the features JSON is built here
for the few Arrow types the parser writes, so parsing does not import ``datasets``; tests
check it against ``datasets.Features`` and load every output back).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa

from stackexchange.jsontext import read_json_object

SHARD = "data-00000-of-00001.arrow"
# the index that makes a folder's split sub-folders one DatasetDict (datasets' own name)
DATASET_DICT_FILE = "dataset_dict.json"


def _feature(arrow_type: pa.DataType) -> dict:
    if pa.types.is_list(arrow_type):
        return {"feature": _feature(arrow_type.value_type), "_type": "List"}
    names = {pa.string(): "string", pa.int64(): "int64", pa.float32(): "float32"}
    if arrow_type not in names:
        raise TypeError(f"no datasets feature for Arrow type {arrow_type}")
    return {"dtype": names[arrow_type], "_type": "Value"}


def features_json(schema: pa.Schema) -> dict:
    """The ``datasets.Features`` dict of a schema (string, int64, float32 and their lists).

    Example:
        >>> features_json(pa.schema([("tags", pa.list_(pa.string()))]))
        {'tags': {'feature': {'dtype': 'string', '_type': 'Value'}, '_type': 'List'}}
    """
    return {field.name: _feature(field.type) for field in schema}


class DatasetWriter:
    """One ``datasets.Dataset`` folder written batch by batch.

    Example:
        >>> import tempfile, datasets
        >>> schema = pa.schema([("text", pa.string())])
        >>> folder = Path(tempfile.mkdtemp()) / "ds"
        >>> with DatasetWriter(folder, schema) as writer:
        ...     writer.write(pa.record_batch([pa.array(["a", "b"])], schema=schema))
        >>> list(datasets.load_from_disk(str(folder))["text"])
        ['a', 'b']
    """

    def __init__(self, folder: Path, schema: pa.Schema):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.features = features_json(schema)
        metadata = {"huggingface": json.dumps({"info": {"features": self.features}})}
        self.schema = schema.with_metadata(metadata)
        self.rows = 0
        self._digest = hashlib.blake2b(digest_size=8)
        self._writer = pa.ipc.new_stream(str(self.folder / SHARD), self.schema)

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self._writer.write_batch(batch.replace_schema_metadata(self.schema.metadata))
            self.rows += batch.num_rows
            self._digest.update(str(self.rows).encode())

    def close(self) -> None:
        self._writer.close()
        info = {"citation": "", "description": "", "features": self.features}
        info.update(homepage="", license="")
        (self.folder / "dataset_info.json").write_text(json.dumps(info, indent=2))
        state = {
            "_data_files": [{"filename": SHARD}],
            "_fingerprint": self._digest.hexdigest(),
            "_format_columns": None,
            "_format_kwargs": {},
            "_format_type": None,
            "_output_all_columns": False,
            "_split": None,
        }
        (self.folder / "state.json").write_text(json.dumps(state, indent=2, sort_keys=True))

    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def write_dataset_dict_json(folder: Path, splits) -> None:
    """The ``dataset_dict.json`` that makes ``folder``'s split sub-folders one DatasetDict."""
    (Path(folder) / DATASET_DICT_FILE).write_text(json.dumps({"splits": list(splits)}))


def read_split_names(folder: str | Path, error: type[Exception] = ValueError) -> list[str]:
    """The split names in the ``dataset_dict.json`` of ``folder`` (a pair kind of a parsed
    forum, written by :func:`write_dataset_dict_json`): the one reader of that file, so a
    damaged or hand-made one is one line naming it, not a TypeError from its first key.

    Raises:
        error: ``FOLDER: missing or not a saved DatasetDict (run adapter-zoo parse)``; the
            file not valid JSON or not an object (``stackexchange.jsontext``); or
            ``FILE: 'splits' must be a list of split names``.
    """
    index = Path(folder) / DATASET_DICT_FILE
    try:
        names = read_json_object(index, error, "a DatasetDict's index").get("splits")
    except OSError:
        raise error(
            f"{folder}: missing or not a saved DatasetDict (run adapter-zoo parse)"
        ) from None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise error(f"{index}: 'splits' must be a list of split names")
    return names


def read_dataset(folder: str | Path, error: type[ValueError] = ValueError):
    """``datasets.load_from_disk(folder)``, with a missing, truncated or corrupt folder
    reported as ``error`` naming the folder (pyarrow's "Expected to be able to read N bytes"
    names no file).

    Args:
        folder: a ``save_to_disk`` folder (a Dataset or a DatasetDict).
        error: the ValueError subclass to raise (each package has its own).
    """
    import datasets

    try:
        return datasets.load_from_disk(str(folder))
    except FileNotFoundError:
        raise error(f"{folder}: missing (run adapter-zoo parse)") from None
    except (OSError, ValueError) as cause:
        detail = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
        raise error(f"{folder}: unreadable dataset, truncated or corrupt ({detail})") from None
