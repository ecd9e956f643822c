tri run examples/softmax.tri --kernel topk
