package nodeapi

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MinSecretLen is the shortest node secret accepted.
const MinSecretLen = 16

// MaxSkew is how far a request's signing time may be from the server's
// clock.
const MaxSkew = 5 * time.Minute

const (
	headerDate = "X-Twinlake-Node-Date"
	authScheme = "TWINLAKE-NODE "
)

// errAuth is answered 403.
var errAuth = errors.New("node request not authenticated")

// signature is HMAC-SHA256, under the node secret, of the method, the
// path with its query and the signing time: a request cannot be replayed
// against another shard or call, nor beyond MaxSkew. The body is not
// covered: shards carry their own checksums.
func signature(secret []byte, method, uri, date string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(method + "\n" + uri + "\n" + date))
	return hex.EncodeToString(m.Sum(nil))
}

// sign adds the node authentication to r.
func sign(secret []byte, r *http.Request, now time.Time) {
	date := strconv.FormatInt(now.Unix(), 10)
	r.Header.Set(headerDate, date)
	r.Header.Set("Authorization", authScheme+signature(secret, r.Method, r.URL.RequestURI(), date))
}

// verify checks r's node authentication.
func verify(secret []byte, r *http.Request) error {
	date := r.Header.Get(headerDate)
	d, ok := signedAgo(date)
	if !ok {
		return fmt.Errorf("%w: no signing time", errAuth)
	}
	if !inSkew(d) {
		return fmt.Errorf("%w: signing time %s away from this node's clock", errAuth, d.Round(time.Second))
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), authScheme)
	want := signature(secret, r.Method, r.URL.RequestURI(), date)
	if !ok || !hmac.Equal([]byte(got), []byte(want)) {
		return fmt.Errorf("%w: bad signature", errAuth)
	}
	return nil
}

// signedAgo is how long ago date, a signing time in Unix seconds, was;
// false when date is not one.
func signedAgo(date string) (time.Duration, bool) {
	sec, err := strconv.ParseInt(date, 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Since(time.Unix(sec, 0)), true
}

// inSkew reports whether a signature made d ago is within MaxSkew of
// this node's clock, either way.
func inSkew(d time.Duration) bool { return d <= MaxSkew && d >= -MaxSkew }

// HeaderReadOffer carries, on a GET a node passes to the leader, the
// node's offer to read the response's data from the drives itself (see
// objects.RunWriter): the time it was signed, the node's OfferLevel and
// their signature, under the node secret, with the method and path with
// its query. The client's own signature stays in Authorization for the
// leader to check.
const HeaderReadOffer = "X-Twinlake-Node-Read-Offer"

// OfferLevel is what a node does with a leader's answer to its offers:
// from 2, it also decrypts runs of encrypted blobs with the data key sent
// with them, encrypts a body it writes under the data key sent with the
// call, and writes a body as several blobs. A build before levels signed
// offers of level 1 ("date:sig", "date;node;token;sig"), which this build
// takes as such; such a build takes a level 2 offer for none, and answers
// with the data itself.
const OfferLevel = 2

// offerLabel is the label an offer of kind and level is signed under, so
// that no offer can stand for another: level 1's as before levels
// ("read-offer "), a later level's with it ("read-offer/2 ").
func offerLabel(kind string, level int) string {
	if level == 1 {
		return kind + " "
	}
	return kind + "/" + strconv.Itoa(level) + " "
}

// offerSignature is signature's for a read offer of level.
func offerSignature(secret []byte, method, uri, date string, level int) string {
	return signature(secret, offerLabel("read-offer", level)+method, uri, date)
}

// SignReadOffer adds the node's read offer to r, which it passes to the
// leader, in place of any the client sent.
func SignReadOffer(secret []byte, r *http.Request, now time.Time) {
	date := strconv.FormatInt(now.Unix(), 10)
	r.Header.Set(HeaderReadOffer, date+":"+strconv.Itoa(OfferLevel)+":"+offerSignature(secret, r.Method, r.URL.RequestURI(), date, OfferLevel))
}

// VerifiedReadOffer returns the level of the read offer a node of the
// site signed on r within MaxSkew, or false.
func VerifiedReadOffer(secret []byte, r *http.Request) (level int, ok bool) {
	parts := strings.Split(r.Header.Get(HeaderReadOffer), ":")
	var date, got string
	switch len(parts) {
	case 2:
		date, level, got = parts[0], 1, parts[1]
	case 3:
		date, got = parts[0], parts[2]
		if level = offerLevel(parts[1]); level < 2 {
			return 0, false
		}
	default:
		return 0, false
	}
	if d, ok := signedAgo(date); !ok || !inSkew(d) {
		return 0, false
	}
	want := offerSignature(secret, r.Method, r.URL.RequestURI(), date, level)
	return level, hmac.Equal([]byte(got), []byte(want))
}

// offerLevel parses a level written in an offer: 0 if it is none.
func offerLevel(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1000 || strconv.Itoa(n) != s {
		return 0
	}
	return n
}

// HeaderClientAddr carries, on every request a node passes to the leader,
// the address of the client it came from (its RemoteAddr), the time and
// a signature of both, the method and the path with its query under the
// node secret: the leader serves the request as from that client
// (aws:SourceIp in policies, traces, access logs), not from the node.
const HeaderClientAddr = "X-Twinlake-Node-Client"

// clientSignature is signature's for a client address, under a label of
// its own.
func clientSignature(secret []byte, method, uri, date, addr string) string {
	return signature(secret, "client "+method, uri, date+"\n"+addr)
}

// SignClientAddr adds to r, which the node passes to the leader, the
// address of the client it came from, in place of any the client sent.
func SignClientAddr(secret []byte, r *http.Request, addr string, now time.Time) {
	date := strconv.FormatInt(now.Unix(), 10)
	r.Header.Set(HeaderClientAddr, date+";"+addr+";"+clientSignature(secret, r.Method, r.URL.RequestURI(), date, addr))
}

// VerifiedClientAddr returns the client address a node of the site signed
// on r within MaxSkew, or false.
func VerifiedClientAddr(secret []byte, r *http.Request) (string, bool) {
	v := r.Header.Get(HeaderClientAddr)
	date, rest, ok := strings.Cut(v, ";")
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, ';')
	if i < 0 {
		return "", false
	}
	addr, got := rest[:i], rest[i+1:]
	if d, ok := signedAgo(date); !ok || !inSkew(d) || addr == "" {
		return "", false
	}
	want := clientSignature(secret, r.Method, r.URL.RequestURI(), date, addr)
	if !hmac.Equal([]byte(got), []byte(want)) {
		return "", false
	}
	return addr, true
}

// HeaderWriteOffer carries, on a PUT with a body that a node passes to the
// leader, the node's offer to write the body to the drives itself: the
// time, the node's address, a token naming the write on that node, and
// their signature, with the method and the path with its query, under
// the node secret. The leader that takes the offer reads no body, and
// calls the node's PathWrites + token instead (Drive.StoreWrite).
const HeaderWriteOffer = "X-Twinlake-Node-Write-Offer"

// writeOfferSignature is signature's for a write offer of level, under a
// label of its own.
func writeOfferSignature(secret []byte, method, uri, date, node, token string, level int) string {
	return signature(secret, offerLabel("write-offer", level)+method, uri, date+"\n"+node+"\n"+token)
}

// SignWriteOffer adds to r, which node passes to the leader, its offer to
// write r's body itself, known there as token, at this build's OfferLevel.
func SignWriteOffer(secret []byte, r *http.Request, node, token string, now time.Time) {
	date := strconv.FormatInt(now.Unix(), 10)
	level := strconv.Itoa(OfferLevel)
	r.Header.Set(HeaderWriteOffer, date+";"+node+";"+token+";"+level+";"+writeOfferSignature(secret, r.Method, r.URL.RequestURI(), date, node, token, OfferLevel))
}

// VerifiedWriteOffer returns the node, the token and the level of the
// write offer a node of the site signed on r within MaxSkew, or false.
func VerifiedWriteOffer(secret []byte, r *http.Request) (node, token string, level int, ok bool) {
	parts := strings.Split(r.Header.Get(HeaderWriteOffer), ";")
	var date, got string
	switch len(parts) {
	case 4:
		date, node, token, level, got = parts[0], parts[1], parts[2], 1, parts[3]
	case 5:
		date, node, token, got = parts[0], parts[1], parts[2], parts[4]
		if level = offerLevel(parts[3]); level < 2 {
			return "", "", 0, false
		}
	default:
		return "", "", 0, false
	}
	if d, ok := signedAgo(date); !ok || !inSkew(d) || node == "" || token == "" {
		return "", "", 0, false
	}
	want := writeOfferSignature(secret, r.Method, r.URL.RequestURI(), date, node, token, level)
	if !hmac.Equal([]byte(got), []byte(want)) {
		return "", "", 0, false
	}
	return node, token, level, true
}

// sealKey is the key Seal and Open use: the node secret's, under a label
// of its own.
func sealKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("twinlake node seal"))
	return m.Sum(nil)
}

// Seal encrypts plain for the site's nodes (AES-256-GCM under a key of the
// node secret), bound to aad: a secret sent between nodes, never in the
// clear on their network.
func Seal(secret, aad, plain []byte) ([]byte, error) {
	aead, err := newSealer(secret)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, plain, aad), nil
}

// Open decrypts what Seal sealed with the same secret and aad.
func Open(secret, aad, sealed []byte) ([]byte, error) {
	aead, err := newSealer(secret)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("nodeapi: sealed data too short")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], aad)
	if err != nil {
		return nil, fmt.Errorf("nodeapi: open sealed data: %w", err)
	}
	return plain, nil
}

func newSealer(secret []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(sealKey(secret))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
