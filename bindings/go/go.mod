module tri

go 1.19
