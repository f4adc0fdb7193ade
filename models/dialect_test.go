package models_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
)

func TestOfDialect(t *testing.T) {
	create := models.Exchange{Method: "POST", Path: "/v1/charges"}
	refund := models.Exchange{Method: "POST", Path: models.RefundsPath}
	lookup := models.Exchange{Method: "GET", Path: "/v1/charges"}
	for _, c := range []struct {
		name   string
		e      models.Exchange
		status int
		body   string
		want   bool
	}{
		{"a charge", create, 201, `{"id":"ch_1","status":"succeeded"}`, true},
		{"random bytes", create, 201, "\x8f\x01\xffz", false},
		{"html", create, 201, "<html>ok</html>", false},
		{"a JSON object without an id", create, 201, `{}`, false},
		{"a JSON string", create, 201, `"ch_1"`, false},
		{"a problem", create, 422, `{"title":"Unprocessable","status":422}`, true},
		{"an error of plain text", create, 422, "nope", false},
		{"a refund", refund, 201, `{"id":"re_1","charge":"ch_1"}`, true},
		{"a charge answered to a refund", refund, 201, `{"object":"charge"}`, false},
		{"a list", lookup, 200, `{"data":[]}`, true},
		{"a lookup of random bytes", lookup, 200, "\x00\x01", false},
	} {
		assert.Equal(t, c.want, models.OfDialect(c.e, c.status, []byte(c.body)), c.name)
	}
}
