"""Recipe files: a paper experiment as a list of ``adapter-zoo`` commands.

A recipe is a TOML file. Its steps are the same commands a user would type, so a recipe
documents an experiment as precisely as it runs it. Values in ``{braces}`` come from the
recipe's ``[vars]`` (overridden by ``[smoke.vars]`` under ``--smoke``) and from built-ins:
``{work}`` (the run's output folder), ``{shipped}`` (the StackExchange archives shipped in
the package) and ``{tiny_base}`` (a tiny random BERT built offline, for smoke runs).

Example:
    >>> from recipes import load_recipe, recipe_dir
    >>> recipe = load_recipe(recipe_dir() / "multicqa_mt_all.toml")
    >>> recipe.name
    'multicqa-mt-all'
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from adapter_zoo.errors import ZooError
from stackexchange.errors import unknown_name
from stackexchange.numbers import check_number

REQUIRED_KEYS = ("name", "paper", "description", "hardware", "published", "step")
STEP_KEYS = {"run", "foreach", "note", "smoke_only", "resources"}
RESOURCE_KEYS = ("cpus", "gpus")


class RecipeError(ZooError):
    """A recipe file that cannot be read or run (names the file and the step)."""


@dataclass(frozen=True)
class Step:
    """One command of a recipe.

    Attributes:
        run: the command line after ``adapter-zoo``, with ``{var}`` placeholders.
        foreach: optional ``"item in {listvar}"``: the command runs once per item.
        note: why this step is there, shown in the run log.
        smoke_only: runs only under ``--smoke``, to build the tiny stand-in for data a full
            run downloads (e.g. ASNQ replaced by a set built from a shipped forum).
        resources: what each of its commands reserves under ``--executor ray``
            (``{cpus = 4}``, ``{gpus = 0.5}``); keys left out take the command's default
            (see :func:`recipes.steps.default_resources`).
    """

    run: str
    foreach: str | None = None
    note: str = ""
    smoke_only: bool = False
    resources: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Recipe:
    """A paper experiment, reproducible from a file.

    Attributes:
        path: the TOML file.
        name: short name (``adapter-zoo run NAME`` finds ``recipes/toml/NAME.toml``).
        paper: the paper, table or figure it reproduces.
        description: what is trained and evaluated.
        hardware: what the full run needs and how long it takes.
        published: the published scores it should reproduce (``source`` plus
            ``scores: {benchmark: {metric: value}}``).
        variables: the full run's variables.
        smoke_variables: overrides for ``--smoke`` (tiny base model, shipped data).
        steps: the commands, in order.
    """

    path: Path
    name: str
    paper: str
    description: str
    hardware: str
    published: dict
    variables: dict = field(default_factory=dict)
    smoke_variables: dict = field(default_factory=dict)
    steps: tuple[Step, ...] = ()


def _resources(raw, where: str) -> dict:
    """A step's ``resources`` table: only cpus and gpus, each a number >= 0."""
    if not isinstance(raw, dict):
        raise RecipeError(f"{where}: resources must be a table like {{cpus = 2, gpus = 1}}")
    for key, value in raw.items():
        if key not in RESOURCE_KEYS:
            raise unknown_name("resource", key, RESOURCE_KEYS, RecipeError, where=where)
        check_number(f"{where}: resource {key}", value, low=0, error=RecipeError)
    return dict(raw)


def _typed(value, kinds, what: str, where: str, field: str):
    """``value`` if it is one of ``kinds``, else one line naming the file and the field."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        raise RecipeError(f"{where}: {field} must be {what}, not {type(value).__name__}")
    return value


def _variables(raw, where: str, field: str) -> dict:
    """A ``[vars]`` table: each value a string, a number or a list of strings and numbers."""
    _typed(raw, dict, "a table", where, field)
    scalar = (str, int, float)
    for key, value in raw.items():
        if isinstance(value, list):
            for item in value:
                _typed(item, scalar, "a string or a number", where, f"{field}.{key} item")
        else:
            _typed(value, scalar, "a string, a number or a list", where, f"{field}.{key}")
    return raw


def _published(published: dict, where: str) -> None:
    """``[published]``: ``source`` and ``results`` strings, ``record`` a table of strings,
    ``scores``/``expected`` tables of benchmark -> metric -> finite number, ``tolerance`` a
    finite number >= 0, ``shipped`` a table whose ``benchmark`` is a string."""
    _typed(published["source"], str, "a string", where, "published.source")
    _typed(published.get("results", ""), str, "a string", where, "published.results")
    record = _typed(published.get("record", {}), dict, "a table", where, "published.record")
    for key, value in record.items():
        _typed(value, (str, int, float), "a string or a number", where, f"published.record.{key}")
    for table in ("scores", "expected"):
        benches = _typed(published.get(table, {}), dict, "a table", where, f"published.{table}")
        for bench, metrics in benches.items():
            field = f"published.{table}.{bench}"
            for metric, value in _typed(metrics, dict, "a table", where, field).items():
                check_number(f"{where}: {field}.{metric}", value, error=RecipeError)
    shipped = _typed(published.get("shipped", {}), dict, "a table", where, "published.shipped")
    _typed(shipped.get("benchmark", ""), str, "a string", where, "published.shipped.benchmark")
    if "tolerance" in published:
        check_number(
            f"{where}: published.tolerance", published["tolerance"], low=0, error=RecipeError
        )


def load_recipe(path: str | Path) -> Recipe:
    """Read and validate a recipe file: every field by type, one line naming the file and the
    field otherwise.

    Raises:
        RecipeError: the file is missing, not TOML, lacks a required key or has a field of
            the wrong type.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecipeError(f"{path}: recipe file not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:  # TOML is UTF-8 text
        raise RecipeError(f"{path}: not a valid TOML recipe: {error}") from None
    except RecursionError:  # arrays or tables nested thousands deep: tomllib recurses
        raise RecipeError(f"{path}: not a valid TOML recipe: nested too deeply") from None
    missing = [key for key in REQUIRED_KEYS if key not in data]
    if missing:
        raise RecipeError(f"{path}: missing required key(s) {', '.join(missing)}")
    for key in ("name", "paper", "description", "hardware"):
        _typed(data[key], str, "a string", str(path), key)
    if not data["name"].strip():
        raise RecipeError(f"{path}: name must not be empty")
    _typed(data["step"], list, "an array of tables ([[step]])", str(path), "step")
    steps = []
    for number, raw in enumerate(data["step"], start=1):
        where = f"{path}: step {number}"
        _typed(raw, dict, "a table", str(path), f"step {number}")
        unknown = set(raw) - STEP_KEYS
        if "run" not in raw or unknown:
            problem = f"unknown key(s) {sorted(unknown)}" if unknown else "no 'run' command"
            raise RecipeError(f"{where}: {problem}")
        _typed(raw["run"], str, "a string", where, "run")
        _typed(raw.get("foreach", ""), str, "a string", where, "foreach")
        _typed(raw.get("note", ""), str, "a string", where, "note")
        _typed(raw.get("smoke_only", False), bool, "true or false", where, "smoke_only")
        steps.append(
            Step(
                run=raw["run"],
                foreach=raw.get("foreach"),
                note=raw.get("note", ""),
                smoke_only=raw.get("smoke_only", False),
                resources=_resources(raw.get("resources", {}), where),
            )
        )
    published = _typed(data["published"], dict, "a table", str(path), "published")
    if "source" not in published:
        raise RecipeError(f"{path}: [published] must name its 'source'")
    _published(published, str(path))
    smoke = _typed(data.get("smoke", {}), dict, "a table", str(path), "smoke")
    return Recipe(
        path=path,
        name=data["name"],
        paper=data["paper"],
        description=data["description"],
        hardware=data["hardware"],
        published=published,
        variables=_variables(data.get("vars", {}), str(path), "vars"),
        smoke_variables=_variables(smoke.get("vars", {}), str(path), "smoke.vars"),
        steps=tuple(steps),
    )
