package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/auth"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// LocalKV returns etcd's key-value API served by this member through
// function calls instead of gRPC over a socket, authenticated as user:
// the same requests, checks (permissions, quota, request limits) and
// answers as through the member's client port, without the encoding, the
// HTTP/2 framing and the socket round trip each call otherwise costs (on a
// site's leader, whose member leads raft, about a fifth of its CPU). Its
// calls fail once the member is closed.
func (e *Embedded) LocalKV(user, password string) clientv3.KV {
	return clientv3.NewKVFromKVClient(e.localKV(user, password), nil)
}

func (e *Embedded) localKV(user, password string) *localKV {
	return &localKV{kvs: v3rpc.NewQuotaKVServer(e.etcd.Server), user: user, password: password,
		authenticate: e.etcd.Server.Authenticate}
}

// localKV is an etcdserverpb.KVClient calling a member's KV server in
// this process. The member takes the caller's identity from the token in
// the incoming gRPC metadata, as its gRPC server would find it; the token
// comes from authenticating once, and again when the member has let it
// expire (simple tokens live 5 minutes past their last use), the
// authentication data changed since, or authentication was turned on
// after the member said it was off.
type localKV struct {
	kvs            etcdserverpb.KVServer
	user, password string
	authenticate   func(context.Context, *etcdserverpb.AuthenticateRequest) (*etcdserverpb.AuthenticateResponse, error)

	mu     sync.Mutex
	token  string // "" until authenticated
	noAuth bool   // the member has authentication off: no token needed
}

var _ etcdserverpb.KVClient = (*localKV)(nil)

// localCall runs fn with a context carrying the token, and once more
// with a new token if the member refused the first: a request refused
// for its token is neither read nor applied, so repeating it is safe.
func localCall[T any](l *localKV, ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	for attempt := 0; ; attempt++ {
		token, err := l.currentToken(ctx, attempt > 0)
		if err != nil {
			return zero, err
		}
		cctx := ctx
		if token != "" {
			cctx = metadata.NewIncomingContext(ctx, metadata.Pairs(rpctypes.TokenFieldNameGRPC, token))
		}
		resp, err := fn(cctx)
		if attempt == 0 && err != nil {
			switch rpctypes.Error(err) {
			case rpctypes.ErrInvalidAuthToken, rpctypes.ErrAuthOldRevision, rpctypes.ErrUserEmpty:
				continue
			}
		}
		return resp, err
	}
}

// currentToken returns the token to send, authenticating first when there
// is none or renew is set.
func (l *localKV) currentToken(ctx context.Context, renew bool) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.noAuth && !renew {
		return "", nil
	}
	if l.token != "" && !renew {
		return l.token, nil
	}
	resp, err := l.authenticate(ctx, &etcdserverpb.AuthenticateRequest{Name: l.user, Password: l.password})
	switch {
	case errors.Is(err, auth.ErrAuthNotEnabled):
		l.noAuth, l.token = true, ""
		return "", nil
	case err != nil:
		return "", fmt.Errorf("cluster: authenticate to the local etcd member: %w", err)
	}
	l.noAuth, l.token = false, resp.Token
	return l.token, nil
}

func (l *localKV) Range(ctx context.Context, in *etcdserverpb.RangeRequest, _ ...grpc.CallOption) (*etcdserverpb.RangeResponse, error) {
	return localCall(l, ctx, func(ctx context.Context) (*etcdserverpb.RangeResponse, error) { return l.kvs.Range(ctx, in) })
}

func (l *localKV) Put(ctx context.Context, in *etcdserverpb.PutRequest, _ ...grpc.CallOption) (*etcdserverpb.PutResponse, error) {
	return localCall(l, ctx, func(ctx context.Context) (*etcdserverpb.PutResponse, error) { return l.kvs.Put(ctx, in) })
}

func (l *localKV) DeleteRange(ctx context.Context, in *etcdserverpb.DeleteRangeRequest, _ ...grpc.CallOption) (*etcdserverpb.DeleteRangeResponse, error) {
	return localCall(l, ctx, func(ctx context.Context) (*etcdserverpb.DeleteRangeResponse, error) {
		return l.kvs.DeleteRange(ctx, in)
	})
}

func (l *localKV) Txn(ctx context.Context, in *etcdserverpb.TxnRequest, _ ...grpc.CallOption) (*etcdserverpb.TxnResponse, error) {
	return localCall(l, ctx, func(ctx context.Context) (*etcdserverpb.TxnResponse, error) { return l.kvs.Txn(ctx, in) })
}

func (l *localKV) Compact(ctx context.Context, in *etcdserverpb.CompactionRequest, _ ...grpc.CallOption) (*etcdserverpb.CompactionResponse, error) {
	return localCall(l, ctx, func(ctx context.Context) (*etcdserverpb.CompactionResponse, error) { return l.kvs.Compact(ctx, in) })
}

// RangeStream runs the member's streamed range in a goroutine of its own,
// handing each chunk over as the caller receives it: the member reads a
// chunk only once the caller took the one before (an unbuffered hand-over,
// as a stream's flow control would bound it), and stops at the first
// chunk after the caller's context ends. A refusal of the token comes
// before any chunk, so the range is then run once more with a new one.
func (l *localKV) RangeStream(ctx context.Context, in *etcdserverpb.RangeRequest, _ ...grpc.CallOption) (etcdserverpb.KV_RangeStreamClient, error) {
	s := &localStream{ctx: ctx, chunks: make(chan *etcdserverpb.RangeStreamResponse), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		srv := &localStreamServer{s: s}
		_, s.err = localCall(l, ctx, func(ctx context.Context) (struct{}, error) {
			if srv.sent {
				// Refused after chunks went out (the member's auth data
				// changed meanwhile): running it again would repeat them.
				return struct{}{}, errStreamCut
			}
			srv.ctx = ctx
			return struct{}{}, l.kvs.RangeStream(in, srv)
		})
	}()
	return s, nil
}

// errStreamCut ends a stream refused after some of its chunks went out.
var errStreamCut = status.Error(codes.Unavailable, "cluster: the in-process range stream was refused part way; read it again")

// localStream is the caller's end of an in-process RangeStream.
type localStream struct {
	ctx    context.Context
	chunks chan *etcdserverpb.RangeStreamResponse
	done   chan struct{} // closed once the member returned, err set
	err    error
	grpc.ClientStream
}

func (s *localStream) Recv() (*etcdserverpb.RangeStreamResponse, error) {
	select {
	case c := <-s.chunks:
		return c, nil
	case <-s.done:
		if s.err != nil {
			return nil, s.err
		}
		return nil, io.EOF
	}
}

func (s *localStream) Header() (metadata.MD, error) { return nil, nil }
func (s *localStream) Trailer() metadata.MD         { return nil }
func (s *localStream) CloseSend() error             { return nil }
func (s *localStream) Context() context.Context     { return s.ctx }

// localStreamServer is the member's end: Send waits for the caller.
type localStreamServer struct {
	ctx  context.Context // with the token, as the member's gRPC server gives it
	s    *localStream
	sent bool // a chunk went out
	grpc.ServerStream
}

func (s *localStreamServer) Send(c *etcdserverpb.RangeStreamResponse) error {
	select {
	case s.s.chunks <- c:
		s.sent = true
		return nil
	case <-s.ctx.Done():
		return status.FromContextError(s.ctx.Err()).Err()
	}
}

func (s *localStreamServer) SetHeader(metadata.MD) error  { return nil }
func (s *localStreamServer) SendHeader(metadata.MD) error { return nil }
func (s *localStreamServer) SetTrailer(metadata.MD)       {}
func (s *localStreamServer) Context() context.Context     { return s.ctx }
