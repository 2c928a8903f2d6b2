package azstore

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
)

// The Queue and Blob services open their XML bodies with a UTF-8 byte
// order mark (recorded azqueue sessions against Azure show
// "\ufeff<?xml ...><Error>..."); Azurite writes none.
const queueNotFoundBody = "\ufeff<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>MessageNotFound</Code>" +
	"<Message>The specified message does not exist.\nRequestId:5d1c0f0e-0003-0018-0000-000000000000\nTime:2026-11-22T12:00:00.0000000Z</Message></Error>"

// TestQueueErrorAfterByteOrderMark proves the service's message is kept
// when the error body starts with a byte order mark, as Azure's do.
func TestQueueErrorAfterByteOrderMark(t *testing.T) {
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("x-ms-error-code", "MessageNotFound")
		w.WriteHeader(404)
		_, _ = io.WriteString(w, queueNotFoundBody)
	})
	err := f.sharedKeyStore(t).Queue("jobs").DeleteMessage(t.Context(), "6e0687d7-ada1-4969-9f2f-a911fb023f18", "AgAAAAMAAAAAAAAA")
	if store.Code(err) != "MessageNotFound" {
		t.Fatalf("error %v, want code MessageNotFound", err)
	}
	if !strings.Contains(err.Error(), "The specified message does not exist.") {
		t.Errorf("error %q lacks the service's message", err)
	}
	if strings.Contains(err.Error(), "RequestId") {
		t.Errorf("error %q keeps more than the message's first line", err)
	}
}

// TestTransactReadsXMLChangesetError proves a changeset part that carries
// the Table service's XML error (<error><code>..</code><message>..), the
// format it answers a changeset in when it has no JSON request to answer
// in kind, gives the service's code, status and failing index.
func TestTransactReadsXMLChangesetError(t *testing.T) {
	xmlPart := func(status, code, msg string) string {
		return "HTTP/1.1 " + status + "\r\nDataServiceVersion: 1.0;\r\nContent-Type: application/xml;charset=utf-8\r\n\r\n" +
			`<?xml version="1.0" encoding="utf-8"?><error xmlns="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">` +
			"<code>" + code + `</code><message xml:lang="en-US">` + msg + "\nRequestId:1a930d9b-8002-0020-575c-d1b166000000\nTime:2026-11-22T12:00:00.0000000Z</message></error>"
	}
	cases := []struct {
		part   string
		code   string
		status int
		index  int
		text   string
	}{
		{xmlPart("409 Conflict", "EntityAlreadyExists", "1:The specified entity already exists."), "EntityAlreadyExists", 409, 1, "The specified entity already exists."},
		{xmlPart("400 Bad Request", "InvalidInput", "0:One of the request inputs is not valid."), "InvalidInput", 400, 0, "One of the request inputs is not valid."},
		{xmlPart("412 Precondition Failed", "UpdateConditionNotSatisfied", "1:The update condition specified in the request was not satisfied."), "UpdateConditionNotSatisfied", 412, 1, "update condition"},
	}
	for _, tc := range cases {
		f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
			changesetResponse(w, tc.part)
		})
		_, err := f.sharedKeyStore(t).Table("tbl").Transact(t.Context(), []store.Action{
			{Kind: store.ActionInsert, Entity: entity("p", "a")},
			{Kind: store.ActionUpdateMerge, Entity: entity("p", "b"), IfMatch: store.ETagAny},
		})
		var se *store.Error
		if !errors.As(err, &se) {
			t.Fatalf("%s: error %v is not a *store.Error", tc.code, err)
		}
		if se.Code != tc.code || se.Status != tc.status || se.Index != tc.index {
			t.Errorf("got code %q status %d index %d, want %q %d %d (%v)", se.Code, se.Status, se.Index, tc.code, tc.status, tc.index, err)
		}
		if !strings.Contains(se.Message, tc.text) || strings.Contains(se.Message, "RequestId") {
			t.Errorf("%s: message %q, want the service's first line", tc.code, se.Message)
		}
	}
	// A Table XML error may open with a byte order mark too.
	body := cases[0].part[strings.Index(cases[0].part, "\r\n\r\n")+4:]
	if code, msg := azbase.ParseServiceError([]byte("\ufeff" + body)); code != "EntityAlreadyExists" || msg != "1:The specified entity already exists." {
		t.Errorf("XML error after a byte order mark parses as %q %q", code, msg)
	}
}
