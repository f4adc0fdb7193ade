module github.com/idemcheck/idemcheck

go 1.26.8

require (
	github.com/failsafe-go/failsafe-go v0.9.8 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
