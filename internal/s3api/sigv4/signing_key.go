package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"strings"
	"sync"
)

// maxCachedKeys bounds the signing-key cache. A key lives for one day, one
// region and one service per access key, so even a busy server holds only a
// few hundred; the bound is there so hostile scopes cannot grow memory.
const maxCachedKeys = 1024

// keyCache memoizes derived signing keys, saving the four HMACs of the
// derivation on nearly every request. The zero value is ready to use and it
// is safe for concurrent use.
type keyCache struct {
	mu   sync.Mutex
	keys map[scopeKey]cachedKey
}

// scopeKey names a signing key. The secret is not part of it, so a rotated
// secret replaces the entry instead of shadowing it.
type scopeKey struct {
	accessKey, date, region, service string
}

type cachedKey struct {
	secret string
	key    [sha256.Size]byte
}

// get returns the signing key for secret and the credential scope,
// deriving and caching it on a miss. When the cache is full an arbitrary
// entry is evicted; which one matters little because entries are cheap to
// recompute.
func (c *keyCache) get(accessKey, secret string, s scope) [sha256.Size]byte {
	k := scopeKey{accessKey, s.date, s.region, s.service}
	c.mu.Lock()
	e, ok := c.keys[k]
	c.mu.Unlock()
	if ok && e.secret == secret {
		return e.key
	}
	key := deriveKey(secret, s)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil {
		c.keys = make(map[scopeKey]cachedKey)
	}
	if _, present := c.keys[k]; !present && len(c.keys) >= maxCachedKeys {
		for old := range c.keys {
			delete(c.keys, old)
			break
		}
	}
	// Clone: the strings are slices of request headers, which the cache
	// must not keep alive.
	k = scopeKey{strings.Clone(k.accessKey), strings.Clone(k.date), strings.Clone(k.region), strings.Clone(k.service)}
	c.keys[k] = cachedKey{secret: secret, key: key}
	return key
}

// deriveKey computes the SigV4 signing key:
// HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service), "aws4_request").
func deriveKey(secret string, s scope) [sha256.Size]byte {
	k := hmacSum([]byte("AWS4"+secret), s.date)
	k = hmacSum(k[:], s.region)
	k = hmacSum(k[:], s.service)
	return hmacSum(k[:], terminator)
}

func hmacSum(key []byte, data string) [sha256.Size]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	var out [sha256.Size]byte
	m.Sum(out[:0])
	return out
}
