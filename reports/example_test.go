package reports_test

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// A checkout whose first request the fault layer answered with an injected
// 503 and whose retry, under the same key, was charged.
func ExampleMermaid() {
	at := time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)
	key := models.FormatKey("01a1b2c3-d4e5-4f60-8a9b-0c1d2e3f4a5b")
	h := models.Snapshot{
		Steps: []models.Step{{N: 1, Action: "checkout", Args: "order 1 with visa", At: at}},
		Ops: []models.Operation{{
			ID: 1, Step: 1, Actor: "shopper", Kind: models.OpCheckout, OrderID: 1, Card: "visa",
			Returned: true, Result: "Paid", HTTPStatus: 201, ChargeID: "ch_000001",
		}},
		Exchanges: []models.Exchange{
			{ID: 1, Seq: 3, OpID: 1, Method: "POST", Path: "/v1/charges", HasKey: true, KeyHeader: key,
				Fault: "503", Done: true, Status: 503},
			{ID: 2, Seq: 5, OpID: 1, Method: "POST", Path: "/v1/charges", HasKey: true, KeyHeader: key,
				Fault: "pass", Forwarded: true, ProviderDone: true, ProviderSeq: 7, ProviderStatus: 201,
				ProviderChargeID: "ch_000001", Done: true, Status: 201, ChargeID: "ch_000001"},
		},
	}
	fmt.Print(reports.Mermaid(h))
	// Output:
	// sequenceDiagram
	//     participant Shopper
	//     participant Client
	//     participant Provider
	//     Note over Shopper,Provider: step 1: checkout order 1 with visa
	//     Shopper->>Client: checkout order 1 (visa)
	//     Client-)Provider: POST /v1/charges key #quot;01a1b2c3…4a5b#quot;
	//     Note over Client,Provider: 503 injected, not forwarded
	//     Client->>Provider: POST /v1/charges key #quot;01a1b2c3…4a5b#quot;
	//     Provider-->>Client: 201 ch_000001
	//     Client-->>Shopper: Paid 201 ch_000001
}
