tri test tests/golden/cli/inputs/run_line_misspelled_arg.tri
