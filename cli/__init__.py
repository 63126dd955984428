"""The `synth` command line: one module per command group, registered in `synth.cli.app`."""
