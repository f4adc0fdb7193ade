package provider_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// A request sent twice under one Idempotency-Key is charged once; the second
// answer is the first one replayed, byte for byte.
func ExampleProvider() {
	p := provider.New(provider.Config{})
	send := func(key string) {
		r := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(
			`{"amount":54890,"currency":"TRY","source":"tok_visa","merchant_reference":"bookstore-1001-a"}`))
		r.Header.Set(models.IdempotencyKeyHeader, key)
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get(models.ReplayedHeader), w.Body.String())
	}
	send(`"order-1001-attempt-1"`)
	send(`"order-1001-attempt-1"`)
	fmt.Println("charges:", len(p.Charges()))
	// Output:
	// 201  {"id":"ch_000001","amount":54890,"currency":"TRY","status":"succeeded","merchant_reference":"bookstore-1001-a"}
	// 201 true {"id":"ch_000001","amount":54890,"currency":"TRY","status":"succeeded","merchant_reference":"bookstore-1001-a"}
	// charges: 1
}
