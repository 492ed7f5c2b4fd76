module harmonyoracle

go 1.19
