"""Run a recipe: expand its variables and call each ``adapter-zoo`` command in turn."""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
import re
import shlex
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from recipes.ledger import plan_resume, record_finished
from recipes.recipe import Recipe, RecipeError, Step
from recipes.steps import build_jobs
from stackexchange.catalog import shipped_data
from stackexchange.errors import unknown_name
from stackexchange.paths import check_folder_path
from stackexchange.source import forum_short_name

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
FOREACH = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s+in\s+\{([A-Za-z_][A-Za-z0-9_]*)\}\s*$")
SET_PREFIX = "set:"
EXECUTORS = ("local", "ray")
# Written into a smoke run's work folder when the run creates it (or finds it empty): the
# folders a smoke run may write into are the ones holding it.
SMOKE_MARKER = ".adapter-zoo-smoke.json"
# The recipe files being run, outermost first (a step may run another recipe).
_RUNNING: contextvars.ContextVar[tuple[Path, ...]] = contextvars.ContextVar(
    "recipes_running", default=()
)


def recipe_dir() -> Path:
    """The recipes shipped as package data: one TOML file per paper experiment."""
    return Path(__file__).resolve().parent / "toml"


def find_recipe(name_or_path: str) -> Path:
    """Resolve a recipe name (``multicqa_mt_all``) or a path to a ``.toml`` file to a file.

    A file ``name_or_path`` is the recipe, then a recipe shipped under that name: a folder
    that happens to have the name (``outputs/multicqa_mt_all``) does not hide it.

    Raises:
        RecipeError: no shipped recipe has the name, or the path is a folder (one line
            saying what a recipe is and where the shipped ones are).
    """
    path = Path(name_or_path)
    if path.is_file() or (path.suffix == ".toml" and not os.path.lexists(path)):
        return path  # a missing .toml is load_recipe's to report
    candidate = recipe_dir() / f"{name_or_path.replace('-', '_')}.toml"
    if candidate.is_file():
        return candidate
    names = sorted(p.stem for p in recipe_dir().glob("*.toml"))
    known = ", ".join(names)
    if os.path.lexists(path):
        what = "a folder" if path.is_dir() else "not a file"
        raise RecipeError(
            f"{name_or_path}: {what}, not a recipe; a recipe is a .toml file, or the name of "
            f"one shipped in {recipe_dir()}: {known}"
        )
    raise unknown_name("recipe", name_or_path, names, RecipeError)


def work_folder(recipe: Recipe, smoke: bool, work=None) -> Path:
    """A run's work folder: ``work``, by default ``outputs/<recipe>[-smoke]``."""
    return Path(work or Path("outputs") / (recipe.name + ("-smoke" if smoke else ""))).resolve()


def builtin_variables(work: Path) -> dict:
    """The variables every recipe may use: ``{shipped}`` (the shipped forum archives) and
    ``{tiny_base}`` (the tiny random BERT of smoke runs)."""
    return {"shipped": str(shipped_data()), "tiny_base": str(work / "tiny-bert")}


def _resolve_value(value):
    """``"set:balanced"`` becomes the catalog's list of forum hosts."""
    if isinstance(value, str) and value.startswith(SET_PREFIX):
        from stackexchange.catalog import forum_set

        spec = value[len(SET_PREFIX) :]
        name, _, flag = spec.partition("-")
        return list(forum_set(name, exclude_eval=flag == "zeroshot"))
    return value


def expand(command: str, variables: dict, *, where: str) -> list[str]:
    """Split ``command`` like a shell and substitute ``{var}`` placeholders.

    A token that is exactly ``{var}`` with a list value becomes one token per item, so
    ``--forums {forums}`` passes every forum.
    """
    argv: list[str] = []
    for token in shlex.split(command):
        whole = PLACEHOLDER.fullmatch(token)
        if whole and isinstance(variables.get(whole.group(1)), list | tuple):
            argv.extend(str(item) for item in variables[whole.group(1)])
            continue

        def substitute(match: re.Match) -> str:
            key = match.group(1)
            if key not in variables:
                raise RecipeError(f"{where}: unknown variable {{{key}}}")
            value = variables[key]
            if isinstance(value, list | tuple):
                raise RecipeError(f"{where}: list variable {{{key}}} must stand alone")
            return str(value)

        argv.append(PLACEHOLDER.sub(substitute, token))
    return argv


def plan(recipe: Recipe, *, smoke: bool, work: Path, builtins: dict) -> list[tuple[str, list[str]]]:
    """Every command the recipe will run, fully expanded, as ``(label, argv)``."""
    return [(label, argv) for label, argv, _ in _plan(recipe, smoke, work, builtins)]


def _plan(recipe: Recipe, smoke: bool, work: Path, builtins: dict) -> list[tuple[str, list, dict]]:
    """:func:`plan`'s commands with their step's declared resources: ``(label, argv, resources)``."""
    variables = run_variables(recipe, smoke, work, builtins)
    commands = []
    for number, step in enumerate(recipe.steps, start=1):
        if step.smoke_only and not smoke:
            continue
        where = f"{recipe.path}: step {number}"
        for label, scope in _iterations(step, variables, where):
            argv = expand(step.run, scope, where=where)
            commands.append((f"step {number}{label}", argv, step.resources))
    return commands


def run_variables(recipe: Recipe, smoke: bool, work: Path, builtins: dict) -> dict:
    """The variables of a run, every placeholder filled: ``[vars]`` (with ``[smoke.vars]``
    under ``smoke``), ``work`` and ``builtins``."""
    variables = {**recipe.variables, **(recipe.smoke_variables if smoke else {})}
    variables = {**builtins, "work": str(work), **variables}
    # Variables may refer to each other ("{work}/parsed"); two rounds cover the recipes.
    for _ in range(2):
        for key, value in list(variables.items()):
            where = f"{recipe.path}: [vars] {key}"
            if isinstance(value, list | tuple):
                variables[key] = [fill(item, variables, where) for item in value]
            else:
                variables[key] = fill(value, variables, where)
    variables = {key: _resolve_value(value) for key, value in variables.items()}
    # Zoo entries are named after their forum's short name: {forums_names} lists them.
    for key, value in list(variables.items()):
        if isinstance(value, list):
            variables.setdefault(f"{key}_names", [forum_short_name(str(v)) for v in value])
    return variables


def fill(value, variables: dict, where: str):
    """Substitute placeholders inside one string value (lists are filled item by item)."""
    if not isinstance(value, str) or not PLACEHOLDER.search(value):
        return value
    return " ".join(expand(value, variables, where=where))


def _iterations(step: Step, variables: dict, where: str):
    """One scope per combination of the step's loops (``a in {as}, b in {bs}``)."""
    if step.foreach is None:
        yield "", variables
        return
    loops = []
    for clause in step.foreach.split(","):
        match = FOREACH.match(clause)
        if not match:
            raise RecipeError(f"{where}: foreach must look like 'forum in {{forums}}'")
        item, source = match.groups()
        values = variables.get(source)
        if not isinstance(values, list | tuple):
            raise RecipeError(f"{where}: foreach needs a list variable, {{{source}}} is {values!r}")
        loops.append((item, values))
    for combination in itertools.product(*(values for _, values in loops)):
        scope = dict(variables)
        for (item, _), value in zip(loops, combination):
            scope[item] = value
            scope[f"{item}_name"] = forum_short_name(str(value))
        yield " [" + ", ".join(map(str, combination)) + "]", scope


def claim_smoke_folder(work: Path, recipe: Recipe) -> None:
    """Make ``work`` a smoke run's own folder, or refuse: a smoke run builds a tiny model, a
    zoo and results inside it, so it writes only into a folder it created (or an empty one).

    Raises:
        RecipeError: ``work`` holds files and no smoke run created it.
    """
    from stackexchange.io import atomic_write_json, remove_stale_temporaries

    marker = work / SMOKE_MARKER
    if marker.is_file():
        return
    # what a run killed while it wrote the marker left (its temporary) is no file of the user
    remove_stale_temporaries(work)
    if os.path.lexists(work) and (not work.is_dir() or any(work.iterdir())):
        raise RecipeError(
            f"{work}: already exists and was not made by an adapter-zoo --smoke run "
            f"(no {SMOKE_MARKER}); --smoke writes only into folders it creates: choose "
            "another --work"
        )
    atomic_write_json(marker, {"recipe": recipe.name, "smoke": True})


@contextlib.contextmanager
def own_zoo(folder: str | Path) -> Iterator[Path]:
    """Use ``folder`` as the zoo (``ADAPTER_ZOO_HOME``) inside the block, then restore it.

    Smoke runs train into a zoo of their own, so they never replace an entry of the user's.
    """
    old = os.environ.get("ADAPTER_ZOO_HOME")
    os.environ["ADAPTER_ZOO_HOME"] = str(folder)
    try:
        yield Path(folder)
    finally:
        if old is None:
            os.environ.pop("ADAPTER_ZOO_HOME", None)
        else:
            os.environ["ADAPTER_ZOO_HOME"] = old


def _recipe_step(argv: list[str]) -> tuple[str, bool] | None:
    """``(recipe, smoke)`` of a step that runs a recipe (``run RECIPE ...``), else None."""
    if not argv or argv[0] != "run":
        return None
    from adapter_zoo.cli import build_parser

    try:
        args = build_parser().parse_args(argv)
    except SystemExit:  # the step itself reports its bad arguments when it runs
        return None
    return args.recipe, args.smoke


def refuse_self_runs(recipe: Recipe, *, smoke: bool, work: Path, chain=()) -> None:
    """Refuse a recipe whose steps run it again, directly or through other recipes (it would
    never end); checked before anything runs, following every ``run`` step's recipe.

    Raises:
        RecipeError: ``<file>: step 2 runs recipe 'a', which is already running (a -> b -> a);
            a recipe may not run itself``.
    """
    chain = (*chain, recipe.path.resolve())
    for label, argv, _ in _plan(recipe, smoke, work, builtin_variables(work)):
        step = _recipe_step(argv)
        if step is None:
            continue
        target = find_recipe(step[0]).resolve()
        if target in chain:
            names = " -> ".join(path.stem for path in (*chain, target))
            raise RecipeError(
                f"{recipe.path}: {label} runs recipe {step[0]!r}, which is already running "
                f"({names}); a recipe may not run itself"
            )
        from recipes.recipe import load_recipe

        refuse_self_runs(load_recipe(target), smoke=step[1], work=work, chain=chain)


def run_recipe(
    recipe: Recipe,
    *,
    smoke: bool = False,
    work: str | Path | None = None,
    dry_run: bool = False,
    execute: Callable[[list[str]], int] | None = None,
    log: Callable[[str], None] = print,
    executor: str = "local",
    address: str | None = None,
) -> Path:
    """Run every step of ``recipe``; return the work folder.

    Under ``smoke`` the recipe's ``[smoke.vars]`` replace its data and model with the
    shipped forums and a tiny random BERT, and the zoo is kept inside the work folder so a
    smoke run never touches the user's zoo.

    ``executor="local"`` runs the commands one after another in this process;
    ``executor="ray"`` runs independent ones at once as Ray tasks (on the cluster at
    ``address``, or a local one, see :mod:`recipes.ray_executor`). Both skip the commands
    an earlier run in the same work folder finished (:mod:`recipes.ledger`), so a killed
    run resumes where it stopped.

    Raises:
        RecipeError: the work folder or one above it is a file, a variable is unknown, a
            step runs this recipe again (directly or through another), or a step fails
            (the step is named).
    """
    if executor not in EXECUTORS:
        raise RecipeError(f"unknown executor {executor!r}; choose {' or '.join(EXECUTORS)}")
    work = check_folder_path(work_folder(recipe, smoke, work), error=RecipeError)
    commands = _plan(recipe, smoke, work, builtin_variables(work))
    refuse_self_runs(recipe, smoke=smoke, work=work, chain=_RUNNING.get())
    log(f"recipe {recipe.name}: {recipe.paper}")
    log(f"  {len(commands)} command(s); work folder {work}")
    if dry_run:
        for label, argv, _ in commands:
            log(f"  {label}: adapter-zoo {shlex.join(argv)}")
        return work
    if smoke:
        from adapter_zoo.tiny import build_tiny_bert

        claim_smoke_folder(work, recipe)
        build_tiny_bert(work / "tiny-bert", error=RecipeError)
    work.mkdir(parents=True, exist_ok=True)
    with own_zoo(work / "zoo") if smoke else contextlib.nullcontext():
        jobs = build_jobs(commands, smoke=smoke)
        if executor == "ray":
            from recipes.ray_executor import run_on_ray

            run_on_ray(jobs, work=work, address=address, log=log, recipe=recipe)
            return work
        from adapter_zoo.cli import main as cli_main

        execute = execute or cli_main
        finished = plan_resume(jobs, work)  # a killed run resumes after its last finished job
        for job in jobs:
            label, argv = job.label, job.argv
            if job.index in finished:
                log(f"  {label}: finished by an earlier run, skipped")
                continue
            log(f"  {label}: adapter-zoo {shlex.join(argv)}")
            started = time.perf_counter()
            token = _RUNNING.set((*_RUNNING.get(), recipe.path.resolve()))
            try:  # a step that runs a recipe sees this one running (refuse_self_runs)
                code = execute(argv)
            finally:
                _RUNNING.reset(token)
            if code:
                raise RecipeError(
                    f"{recipe.path}: {label} failed with exit code {code}: "
                    f"adapter-zoo {shlex.join(argv)}"
                )
            record_finished(work, job)
            log(f"    done in {time.perf_counter() - started:.1f}s")
    return work
