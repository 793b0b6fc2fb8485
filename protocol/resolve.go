package protocol

import (
	"context"
	"net"
	"net/netip"
)

// TargetResolver is a Query that resolves some targets itself, as the
// game's client does: one whose protocol follows an SRV record
// ([Protocol.SRV]) resolves a host name given without a port through that
// record. A scan or a monitor asks it for the address of such a target
// before it queries, and queries that address.
type TargetResolver interface {
	Query
	// ResolveTarget returns the address the query asks first for target,
	// HOST[:PORT] as the user gave it (the target Do is given), looking
	// names up with the resolver of ctx (see [WithResolver]). own is
	// false when the query resolves target as every protocol does, by the
	// address of the host on the port given or the default one: then the
	// caller resolves it, and addr and err are zero.
	ResolveTarget(ctx context.Context, target string) (addr netip.AddrPort, own bool, err error)
}

// resolverKey is the context key of WithResolver.
type resolverKey struct{}

// WithResolver returns ctx carrying r, the resolver with which a query
// that resolves its target itself (a [TargetResolver]'s ResolveTarget,
// and its Do) looks names up; without one, net.DefaultResolver.
func WithResolver(ctx context.Context, r *net.Resolver) context.Context {
	return context.WithValue(ctx, resolverKey{}, r)
}

// resolverOf returns the resolver ctx carries, or net.DefaultResolver.
func resolverOf(ctx context.Context) *net.Resolver {
	if r, _ := ctx.Value(resolverKey{}).(*net.Resolver); r != nil {
		return r
	}
	return net.DefaultResolver
}
