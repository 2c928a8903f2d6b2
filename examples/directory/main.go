// Command directory is an employee directory served as JSON over HTTP,
// its storage declared once with the entity model (package model):
// employees found by unique email and by last name across departments,
// each department showing its manager's name and phone (a copy the model
// keeps), employees moved to an archive, a newest-first audit log per
// employee, and a profile photo of up to 5 MB in a blob (model.Blob).
// It runs on memstore by default; pass -conn (or set TABLEKIT_CONN or
// TABLEKIT_AZURITE_CONN) to run it against Azurite or Azure.
//
//	go run ./examples/directory -addr 127.0.0.1:8080
//	go run ./examples/directory -conn "$TABLEKIT_AZURITE_CONN"
//
// See README.md for the routes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

func main() {
	conn := backend.ConnFlag()
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve on")
	prefix := flag.String("prefix", "Directory", "prefix of the tables', queues' and container's names")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn), azqueues.Service(), azblobs.Service())
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := Open(ctx, st, *prefix, nil) // errors of the background work go to slog
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := s.Runner.Run(ctx); err != nil && ctx.Err() == nil {
			log.Fatal(err)
		}
	}()
	srv := &http.Server{Addr: *addr, Handler: Handler(s)}
	go func() { <-ctx.Done(); _ = srv.Shutdown(context.Background()) }()
	slog.Info("directory", "backend", name, "addr", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// Handler serves the directory's routes over s.
func Handler(s *Storage) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /employees", func(w http.ResponseWriter, r *http.Request) {
		var e Employee
		if !readJSON(w, r, &e) {
			return
		}
		if msg := check(&e); msg != "" {
			fail(w, http.StatusBadRequest, msg)
			return
		}
		reply(w, http.StatusCreated, &e, s.Staff.Insert(r.Context(), &e))
	})
	mux.HandleFunc("GET /employees", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case q.Get("email") != "":
			e, err := s.Staff.Find(r.Context(), "email", q.Get("email"))
			reply(w, http.StatusOK, e, err)
		case q.Get("lastName") != "":
			all, err := s.Staff.FindAll(r.Context(), "lastname", q.Get("lastName"))
			if all == nil {
				all = []*Employee{}
			}
			reply(w, http.StatusOK, all, err)
		default:
			fail(w, http.StatusBadRequest, "give ?email= or ?lastName=")
		}
	})
	mux.HandleFunc("GET /employees/{dept}/{id}", func(w http.ResponseWriter, r *http.Request) {
		e, err := s.Staff.Get(r.Context(), r.PathValue("dept"), r.PathValue("id"))
		reply(w, http.StatusOK, e, err)
	})
	mux.HandleFunc("PATCH /employees/{dept}/{id}", func(w http.ResponseWriter, r *http.Request) {
		var e Employee
		if !readJSON(w, r, &e) {
			return
		}
		if e.Email != "" && !strings.Contains(e.Email, "@") {
			fail(w, http.StatusBadRequest, "email must contain @")
			return
		}
		cur, err := s.Staff.Get(r.Context(), r.PathValue("dept"), r.PathValue("id"))
		if err != nil {
			reply(w, 0, nil, err)
			return
		}
		for _, f := range [][2]*string{{&cur.Email, &e.Email}, {&cur.FirstName, &e.FirstName},
			{&cur.LastName, &e.LastName}, {&cur.Phone, &e.Phone}, {&cur.Manages, &e.Manages}} {
			if *f[1] != "" {
				*f[0] = *f[1] // the fields given change
			}
		}
		// A Merge over cur's ETag: the photo, which Get does not read, stays.
		reply(w, http.StatusOK, cur, s.Staff.Update(r.Context(), cur, store.Merge))
	})
	mux.HandleFunc("POST /employees/{dept}/{id}/archive", func(w http.ResponseWriter, r *http.Request) {
		err := s.MoveToArchive(r.Context(), r.PathValue("dept"), r.PathValue("id"))
		reply(w, http.StatusAccepted, map[string]string{"status": "moving to the archive"}, err)
	})
	mux.HandleFunc("GET /archive/{dept}/{id}", func(w http.ResponseWriter, r *http.Request) {
		e, err := s.Archive.Get(r.Context(), r.PathValue("dept"), r.PathValue("id"))
		reply(w, http.StatusOK, e, err)
	})
	mux.HandleFunc("GET /employees/{dept}/{id}/log", func(w http.ResponseWriter, r *http.Request) {
		n := 20
		if v := r.URL.Query().Get("n"); v != "" {
			var err error
			if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 1000 {
				fail(w, http.StatusBadRequest, "n must be a number from 1 to 1000")
				return
			}
		}
		log, err := s.History(r.Context(), r.PathValue("dept"), r.PathValue("id"), n)
		out := []entry{}
		for _, l := range log {
			out = append(out, entry{Op: l.Op, Version: l.Version, Employee: l.Entity})
		}
		reply(w, http.StatusOK, out, err)
	})
	mux.HandleFunc("PUT /employees/{dept}/{id}/photo", func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxPhoto))
		if err != nil {
			fail(w, http.StatusBadRequest, fmt.Sprintf("photo: at most %d bytes: %v", MaxPhoto, err))
			return
		}
		if len(data) == 0 {
			fail(w, http.StatusBadRequest, "photo: the body is empty")
			return
		}
		reply(w, http.StatusNoContent, nil, s.PutPhoto(r.Context(), r.PathValue("dept"), r.PathValue("id"), data))
	})
	mux.HandleFunc("GET /employees/{dept}/{id}/photo", func(w http.ResponseWriter, r *http.Request) {
		b, err := s.Photo(r.Context(), r.PathValue("dept"), r.PathValue("id"))
		if err != nil {
			reply(w, 0, nil, err)
			return
		}
		w.Header().Set("Content-Type", http.DetectContentType(b))
		_, _ = w.Write(b)
	})
	mux.HandleFunc("POST /departments", func(w http.ResponseWriter, r *http.Request) {
		var d Department
		if !readJSON(w, r, &d) {
			return
		}
		if d.ID == "" || d.Title == "" {
			fail(w, http.StatusBadRequest, "a department needs an id and a title")
			return
		}
		reply(w, http.StatusCreated, &d, s.AddDepartment(r.Context(), &d))
	})
	mux.HandleFunc("GET /departments/{id}", func(w http.ResponseWriter, r *http.Request) {
		d, err := s.Department(r.Context(), r.PathValue("id"))
		reply(w, http.StatusOK, d, err)
	})
	mux.HandleFunc("GET /departments/{id}/manager", func(w http.ResponseWriter, r *http.Request) {
		// The employee whose copy the department row holds: two point reads.
		e, err := s.Staff.SourceOf(r.Context(), "manager", "dept", r.PathValue("id"))
		reply(w, http.StatusOK, e, err)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		h := s.Runner.Health() // no I/O: the runner's last readings
		out := health{Backlog: h.Backlog(), Failing: append([]string{}, h.Failing()...), Jobs: h.Jobs}
		status := http.StatusOK
		if len(out.Failing) > 0 {
			status = http.StatusServiceUnavailable
		}
		reply(w, status, out, nil)
	})
	return mux
}

// health is the background work's state as served: what is left to do,
// the jobs whose last run failed, and each job's runs and last error.
type health struct {
	Backlog runner.Backlog     `json:"backlog"`
	Failing []string           `json:"failing"`
	Jobs    []runner.JobHealth `json:"jobs"`
}

// entry is a log entry as served.
type entry struct {
	Op       string    `json:"op"`
	Version  int64     `json:"version"`
	Employee *Employee `json:"employee,omitempty"`
}

// check names what is missing or wrong in a new employee.
func check(e *Employee) string {
	switch {
	case e.Dept == "" || e.ID == "":
		return "an employee needs a dept and an id"
	case e.LastName == "":
		return "an employee needs a lastName"
	case !strings.Contains(e.Email, "@"):
		return "an employee needs an email containing @"
	}
	return ""
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "bad JSON: "+err.Error())
		return false
	}
	return true
}

// reply writes v with status, or the error's status and message.
func reply(w http.ResponseWriter, status int, v any, err error) {
	switch {
	case err == nil:
	case errors.Is(err, store.ErrInvalidInput):
		status = http.StatusBadRequest
	case errors.Is(err, store.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, partition.ErrDuplicate), errors.Is(err, model.ErrMoving), errors.Is(err, partition.ErrChanged):
		status = http.StatusConflict
	default:
		slog.Error("directory", "err", err)
		fail(w, http.StatusInternalServerError, "internal error")
		return
	}
	if err != nil {
		fail(w, status, err.Error())
		return
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
