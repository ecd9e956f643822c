tri test tests/golden/cli/inputs/run_line_misspelled_item.tri
