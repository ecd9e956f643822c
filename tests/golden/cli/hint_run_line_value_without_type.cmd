tri test tests/golden/cli/inputs/run_line_value_without_type.tri
