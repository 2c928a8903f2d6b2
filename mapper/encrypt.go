package mapper

import (
	"reflect"
)

// EncryptedProperties returns the names of T's properties tagged
// encrypt, in struct field order (none when T has none), or the error
// that makes T unmappable. The mapper stores such a field like any other;
// the encryption is done by the table it writes through: pass the names
// to package encryption (encryption.Config.Properties) and build the
// repository over the encrypting store, as in
//
//	props, err := mapper.EncryptedProperties[Customer]()
//	codec, err := encryption.NewCodec(encryption.Config{Key: key, Properties: props})
//	repo := mapper.NewRepository[Customer](codec.Store(st, "Customers"), "Customers")
//
// Every field kind can be encrypted; an encrypted property cannot be
// filtered on (Where refuses nothing, the encrypting table refuses the
// query before sending it), and the kind's discriminator cannot be
// encrypted.
func EncryptedProperties[T any]() ([]string, error) {
	c, err := codecFor(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range c.fields {
		f := &c.fields[i]
		if !taggedEncrypt(f) {
			continue
		}
		if c.kind != nil && c.kind.Property == f.name {
			return nil, f.errorf("the discriminator property %q of the type's kind cannot be encrypted: readers need it to choose the type", f.name)
		}
		out = append(out, f.name)
	}
	return out, nil
}

// taggedEncrypt reports whether f's struct tag has the option encrypt.
func taggedEncrypt(f *field) bool {
	tag, ok := f.owner.FieldByIndex(f.index).Tag.Lookup("table")
	if !ok {
		return false
	}
	o, err := parseTag(tag)
	return err == nil && o.encrypt
}
