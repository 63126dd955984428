"""An independent second solver: HiGHS (or CP-SAT) through OR-Tools' model builder, on small instances.

OR-Tools' bundled SCIP is the same engine as PySCIPOpt, so it is not used. The model text is read by SCIP,
written as MPS and imported by OR-Tools; the check agrees when both solvers find the same feasibility and,
when both prove optimality, objectives within 1e-6 relative.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from synth.validators.optiscribe.reading import ModelFormat, captured_output, convert_model_text

CrossSolver = Literal["highs", "sat"]
CrossStatus = Literal["optimal", "feasible", "infeasible", "unbounded", "not_solved", "skipped"]
OBJECTIVE_TOLERANCE = 1e-6


@dataclass(frozen=True, kw_only=True)
class CrossCheckSettings:
    """Which OR-Tools solver, its time limit, and the largest instance (in variables) it is asked to solve."""

    solver: CrossSolver = "highs"
    time_limit: float = 20.0
    max_variables: int = 1000

    def to_dict(self) -> dict[str, Any]:
        """Plain values."""
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class CrossCheck:
    """The second solver's answer on one instance."""

    solver: str
    status: CrossStatus
    objective: float | None = None
    bound: float | None = None


def _status_name(status: Any) -> CrossStatus:
    names = {"OPTIMAL": "optimal", "FEASIBLE": "feasible", "INFEASIBLE": "infeasible", "UNBOUNDED": "unbounded"}
    return names.get(getattr(status, "name", str(status)), "not_solved")  # type: ignore[return-value]


def crosscheck_model_text(
    text: str, *, fmt: ModelFormat = "lp", settings: CrossCheckSettings | None = None
) -> CrossCheck:
    """Solve `text` with OR-Tools; instances above `max_variables` are `skipped`."""
    from ortools.linear_solver.python import model_builder

    settings = settings or CrossCheckSettings()
    mps = convert_model_text(text, source=fmt, target="mps")
    builder = model_builder.ModelBuilder()
    if not builder.import_from_mps_string(mps):
        return CrossCheck(solver=settings.solver, status="not_solved")
    if builder.num_variables > settings.max_variables:
        return CrossCheck(solver=settings.solver, status="skipped")
    solver = model_builder.ModelSolver(settings.solver)
    solver.enable_output(False)
    solver.set_time_limit_in_seconds(settings.time_limit)
    if settings.solver == "sat":
        solver.set_solver_specific_parameters("num_workers:1")
    with captured_output():
        status = _status_name(solver.solve(builder))
    solved = status in {"optimal", "feasible"}
    return CrossCheck(
        solver=settings.solver,
        status=status,
        objective=float(solver.objective_value) if solved else None,
        bound=float(solver.best_objective_bound) if solved else None,
    )


def agreement(check: CrossCheck, *, scip_status: str, scip_feasible: bool, scip_objective: float | None) -> str | None:
    """None when SCIP and the second solver agree (or the check was not conclusive), else a one-line reason
    `code: detail` (`infeasible_disagreement`, `feasible_disagreement`, `objective_disagreement`)."""
    if check.status in {"skipped", "not_solved"}:
        return None
    if check.status == "infeasible" and scip_feasible:
        return f"infeasible_disagreement: {check.solver} says infeasible, SCIP found a solution"
    if check.status in {"optimal", "feasible"} and scip_status == "infeasible":
        return f"feasible_disagreement: {check.solver} found a solution, SCIP says infeasible"
    if check.status == "optimal" and scip_status == "optimal" and scip_objective is not None:
        objective = check.objective if check.objective is not None else float("nan")
        if not abs(objective - scip_objective) <= OBJECTIVE_TOLERANCE * max(1.0, abs(scip_objective)):
            detail = f"{check.solver} optimum {objective:.9g} differs from SCIP's {scip_objective:.9g}"
            return f"objective_disagreement: {detail}"
    return None
