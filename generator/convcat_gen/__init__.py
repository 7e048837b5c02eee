"""convcat kernel generator: the kernel space (space), catalog specs (spec),
rendering of templates (render) and the command line (cli)."""
