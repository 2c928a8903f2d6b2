package main

import (
	"context"
	"errors"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// MaxPhoto is the largest profile photo.
const MaxPhoto = 5 << 20

// Employee is stored in its department's partition.
type Employee struct {
	Dept      string     `table:",pk" json:"dept"`
	ID        string     `table:",rk" json:"id"`
	ETag      store.ETag `table:",etag" json:"-"`
	Email     string     `json:"email"`
	FirstName string     `json:"firstName"`
	LastName  string     `json:"lastName"`
	Phone     string     `json:"phone"`
	Manages   string     `json:"manages,omitempty"` // a department's id
	Photo     []byte     `table:"-" json:"-"`       // in a blob (model.Blob): Get leaves it nil
}

// Department holds its manager's names and phone, copied by the model.
type Department struct {
	Kind      string `table:",pk" json:"-"`
	ID        string `table:",rk" json:"id"`
	Title     string `json:"title"`
	FirstName string `json:"managerFirstName,omitempty"`
	LastName  string `json:"managerLastName,omitempty"`
	Phone     string `json:"managerPhone,omitempty"`
}

// Storage declares the model (Staff with its indexes, log, copy and
// photo; Archive with its log and photo) and the runner of its work.
type Storage struct {
	eng            *eventual.Engine
	Staff, Archive *model.Model[Employee] // the declaration: read and write through them
	Runner         *runner.Runner         // the worker, the sweeps, the backlog: Run it, serve its Health
	depts          store.Table
	photos         store.Container
	tables         []string
	st             store.Store
}

// Open creates the tables, queues and container named from prefix, and
// the runner of the model's background work (run, nil for the defaults).
func Open(ctx context.Context, st store.Store, prefix string, run *model.RunOptions) (*Storage, error) {
	s := &Storage{st: st, tables: []string{prefix + "Staff", prefix + "Archive", prefix + "Depts"}}
	var errs []error
	for _, t := range s.tables {
		_, err := st.CreateTableIfNotExists(ctx, t)
		errs = append(errs, err)
	}
	eng, err := eventual.New(st, strings.ToLower(prefix)+"-ops", nil)
	if err != nil {
		return nil, err
	}
	s.eng, s.depts, s.photos = eng, st.Table(s.tables[2]), st.Container(strings.ToLower(prefix)+"-photos")
	if err := errors.Join(append(errs, eng.Setup(ctx), s.photos.Create(ctx))...); err != nil {
		return nil, err
	}
	manages := func(e *Employee) (string, string) {
		if e.Manages == "" {
			return "", "" // copied nowhere
		}
		return "dept", e.Manages
	}
	// The photo in a blob; Archive declares it too, so a move carries it.
	photo := model.Blob("photo", s.photos.Name(), func(e *Employee) *[]byte { return &e.Photo })
	s.Staff, err = model.Define(st, s.tables[0], &model.Options{Engine: eng, MaxBlobSize: MaxPhoto},
		model.GlobalUnique("email", func(e *Employee) string { return e.Email }),
		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }),
		model.Log[Employee](),
		model.CopyTo("manager", s.tables[2], manages, "FirstName", "LastName", "Phone"), photo)
	if err != nil {
		return nil, err
	}
	s.Archive, err = model.Define(st, s.tables[1], &model.Options{Engine: eng, MaxBlobSize: MaxPhoto}, model.Log[Employee](), photo)
	if err != nil {
		return nil, err
	}
	s.Runner, err = model.NewRunner(eng, s.tables[:2], run)
	return s, err
}

// Drop removes the tables and the container (the tests' clean-up).
func (s *Storage) Drop(ctx context.Context) {
	for _, t := range s.tables {
		_ = s.st.DeleteTable(ctx, t)
	}
	_ = s.photos.Delete(ctx)
}

// MoveToArchive moves the employee to the archive, in its department's
// partition there.
func (s *Storage) MoveToArchive(ctx context.Context, dept, id string) error {
	return s.Staff.Move(ctx, dept, id, s.Archive, dept, "")
}

// History returns the newest n entries of the employee's log, in the
// archive once it arrived there.
func (s *Storage) History(ctx context.Context, dept, id string, n int) ([]model.Entry[Employee], error) {
	if _, err := s.Archive.Get(ctx, dept, id); err == nil {
		return s.Archive.Log(ctx, dept, id, n)
	}
	return s.Staff.Log(ctx, dept, id, n)
}

func (s *Storage) AddDepartment(ctx context.Context, d *Department) error {
	d.Kind = "dept"
	e, err := mapper.Encode(d)
	if err == nil {
		_, err = s.depts.Insert(ctx, e)
	}
	return err
}

func (s *Storage) Department(ctx context.Context, id string) (*Department, error) {
	row, err := s.depts.Get(ctx, "dept", id, nil)
	if err != nil {
		return nil, err
	}
	var d Department
	return &d, mapper.Decode(row, &d)
}

// PutPhoto replaces the employee's photo (at most MaxPhoto bytes): a
// Merge of the employee as read, over its ETag, with the photo set.
func (s *Storage) PutPhoto(ctx context.Context, dept, id string, data []byte) error {
	e, err := s.Staff.Get(ctx, dept, id)
	if err != nil {
		return err
	}
	e.Photo = data
	return s.Staff.Update(ctx, e, store.Merge)
}

// Photo reads the employee's photo: its row, then the blob it names.
func (s *Storage) Photo(ctx context.Context, dept, id string) ([]byte, error) {
	return s.Staff.ReadBlob(ctx, dept, id, "photo")
}
