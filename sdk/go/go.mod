module conformancekit/sdk

go 1.19
