"""The natural-language feedback a verifier sends after a turn (Re2DF-style: validity, then each property)."""

from __future__ import annotations

from synth.validators.marco.evaluator import Evaluation, PropertyChange
from synth.validators.marco.properties import SPECS

RESPONSE_HINT = "Respond with only the SMILES of one modified molecule enclosed in <SMILES> </SMILES> tags."


def _property_line(change: PropertyChange) -> str:
    spec = SPECS[change.key]
    if change.value is None or change.source is None:
        return f"- {spec.label}: not scored ({change.reason})."
    verdict = "improved" if change.improved else f"not improved (it must {spec.direction})"
    if change.improved and change.meets_threshold:
        verdict += f", by at least {spec.threshold:g}"
    if not change.scored:
        verdict = change.reason
    return f"- {spec.label}: {change.source:.2f} in the source, {change.value:.2f} now: {verdict}."


def feedback_message(evaluation: Evaluation, *, similarity_floor: float = 0.4) -> str:
    """Feedback for the next turn: why a response is invalid, or how each property and the similarity changed.

    >>> from synth.validators.marco.evaluator import MoleculeEvaluator
    >>> evaluator = MoleculeEvaluator(properties=("qed",))
    >>> feedback_message(evaluator.evaluate("C1CC", evaluator.profile("CCO"))).splitlines()[0]
    'The response is not a valid molecule: the SMILES does not parse (syntax error, e.g. an unclosed ring or branch).'
    """
    if not evaluation.valid:
        return f"The response is not a valid molecule: {evaluation.invalid_reason}.\n{RESPONSE_HINT}"
    similarity = evaluation.similarity or 0.0
    lines = [
        f"The modified molecule <SMILES> {evaluation.canonical} </SMILES> is valid; "
        f"its Tanimoto similarity to the source is {similarity:.2f}."
    ]
    lines += [_property_line(change) for change in evaluation.changes]
    if evaluation.success:
        lines.append("Every scored property improved: the modified molecule is correct.")
    else:
        failing = [f"{SPECS[key].direction} {SPECS[key].label}" for key in evaluation.failing]
        lines.append(f"Therefore the modified molecule is not correct. Still to do: {' and '.join(failing)}.")
    if similarity < similarity_floor:
        lines.append(
            f"The similarity {similarity:.2f} is below {similarity_floor:.2f}: make a smaller change to the source."
        )
    if not evaluation.success:
        lines.append(RESPONSE_HINT)
    return "\n".join(lines)
