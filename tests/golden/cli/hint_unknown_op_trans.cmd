tri check tests/golden/parse_fail/unknown_op_foreign.tri
