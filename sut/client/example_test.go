package client_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

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

// The payment-ready callback arrives after the shopper's checkout was left
// PaymentPending (409 while the provider was still working): it reuses the
// open attempt, so it resends the one key and gets the replayed charge.
func ExampleClient_PaymentReady() {
	provider := newWire(append(repeat(4, status(http.StatusConflict)), reply(http.StatusOK, charge("ch_000001")))...)
	c := client.New(client.Config{
		BaseURL:    "http://provider.test",
		HTTPClient: &http.Client{Transport: provider},
		RetryDelay: time.Millisecond,
	}, client.NewStore())

	order := c.OpenOrder(54890, "TRY")
	res := c.Checkout(context.Background(), order.ID, "tok_visa")
	fmt.Println(res.Outcome, res.HTTPStatus)
	res = c.PaymentReady(context.Background(), order.ID, "tok_visa")
	fmt.Println(res.Outcome, res.HTTPStatus, res.ChargeID)
	fmt.Println(len(provider.posts()), "POSTs,", len(provider.distinctKeys()), "key")
	// Output:
	// PaymentPending 202
	// Paid 200 ch_000001
	// 5 POSTs, 1 key
}
