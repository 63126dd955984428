"""`synth domains`: list the registered domains."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from synth.cli._common import cli_errors, console


def domains_command(
    as_json: bool = typer.Option(False, "--json", help="Print the domains as JSON on stdout."),
) -> None:
    """List the domains `synth generate` accepts, with their verifiers and generator settings."""
    from synth.core.registry import get_domain, list_domains

    entries = []
    for name in list_domains():
        spec = get_domain(name)
        entries.append(
            {
                "name": name,
                "summary": spec.summary,
                "verifiers": list(spec.verifier_names),
                "settings": list(spec.config_model.model_fields),
            }
        )
    if as_json:
        console.print_json(json.dumps(entries))
        return
    table = Table("domain", "verifiers", "generator settings (--set generator.X=...)", "summary")
    for entry in entries:
        table.add_row(entry["name"], ", ".join(entry["verifiers"]), ", ".join(entry["settings"]), entry["summary"])
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add `domains` to the root app."""
    app.command("domains")(cli_errors(domains_command))
