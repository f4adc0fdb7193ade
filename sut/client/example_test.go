package client_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/idemcheck/idemcheck/sut/client"
)

// A checkout whose provider answers 201: the order is Paid and the attempt
// Succeeded, under the one key stored before the request left.
func ExampleClient_Checkout() {
	provider := newWire(reply(http.StatusCreated, charge("ch_000001")))
	c := client.New(client.Config{
		BaseURL:    "http://provider.test",
		HTTPClient: &http.Client{Transport: provider},
	}, client.NewStore())

	order := c.OpenOrder(54890, "TRY") // 548.90 TRY in minor units
	res := c.Checkout(context.Background(), order.ID, "tok_visa")

	fmt.Println(res.Outcome, res.HTTPStatus, res.ChargeID, res.Order.Status)
	fmt.Println(len(provider.posts()), "POST")
	// Output:
	// Paid 200 ch_000001 Paid
	// 1 POST
}
