package app

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// blockedPrefixes are the networks a webhook may not reach unless private
// targets are allowed (--webhook-allow-private): every block of the IANA
// IPv4 and IPv6 Special-Purpose Address Registries, taken whole, plus
// multicast, the deprecated IPv4-compatible ::/96 and site-local fec0::/10.
// A block of those registries that is "globally reachable" (AS112, AMT,
// PCP/TURN anycast) is still no place for a webhook receiver, and one rule
// is easier to check than a table of exceptions.
//
// IPv6 forms that carry an IPv4 address inside (IPv4-compatible ::a.b.c.d,
// IPv4-translated ::ffff:0:a.b.c.d, 6to4 2002:AABB:CCDD::, NAT64
// 64:ff9b::a.b.c.d and 64:ff9b:1::/48, Teredo 2001:0::/32 with its client
// address obfuscated) would reach that IPv4 address through a relay or
// translator, so checking only the IPv6 address would let 2002:7f00:1::
// reach 127.0.0.1. Rather than unwrap each format and judge the IPv4
// address inside, every such range is refused outright: a receiver is
// reached at its own address, never through a transition mechanism. The
// one exception is IPv4-mapped ::ffff:a.b.c.d, which is not a route but
// how the resolver and dual-stack sockets spell a.b.c.d itself: it is
// unmapped and judged as IPv4 (publicAddr).
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		// IPv4 (RFC 6890 and its updates).
		"0.0.0.0/8",          // "this network"
		"10.0.0.0/8",         // private
		"100.64.0.0/10",      // carrier-grade NAT
		"127.0.0.0/8",        // loopback
		"169.254.0.0/16",     // link-local, cloud metadata
		"172.16.0.0/12",      // private
		"192.0.0.0/24",       // IETF protocol assignments
		"192.0.2.0/24",       // documentation
		"192.31.196.0/24",    // AS112
		"192.52.193.0/24",    // AMT
		"192.88.99.0/24",     // 6to4 relay anycast (deprecated)
		"192.168.0.0/16",     // private
		"192.175.48.0/24",    // AS112 direct delegation
		"198.18.0.0/15",      // benchmarking
		"198.51.100.0/24",    // documentation
		"203.0.113.0/24",     // documentation
		"224.0.0.0/4",        // multicast
		"240.0.0.0/4",        // reserved
		"255.255.255.255/32", // limited broadcast
		// IPv6 (RFC 6890 and its updates).
		"::/128",          // unspecified
		"::1/128",         // loopback
		"::/96",           // IPv4-compatible (deprecated)
		"::ffff:0:0/96",   // IPv4-mapped: unmapped before the check, listed for completeness
		"::ffff:0:0:0/96", // IPv4-translated (SIIT)
		"64:ff9b::/96",    // NAT64 well-known prefix
		"64:ff9b:1::/48",  // NAT64 local-use
		"100::/64",        // discard-only
		"2001::/23",       // IETF protocol assignments: Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID 2001:10::/28 and 2001:20::/28, AMT, AS112
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4
		"3fff::/20",       // documentation
		"5f00::/16",       // segment routing SIDs
		"fc00::/7",        // unique-local
		"fe80::/10",       // link-local
		"fec0::/10",       // site-local (deprecated)
		"ff00::/8",        // multicast
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// publicAddr reports whether ip may be the target of a webhook.
func publicAddr(ip netip.Addr) bool {
	// A zone would make every Prefix.Contains false; it says which link,
	// not which address.
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// allowPrivateHint ends a refusal, so an operator who means to reach a
// private address learns how.
const allowPrivateHint = "webhooks may only target the public internet (an operator can allow private targets with --webhook-allow-private)"

// checkPublicHost resolves host and refuses it when any address is not public.
func checkPublicHost(ctx context.Context, host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if !publicAddr(ip) {
			return fmt.Errorf("url points to a non-public address (%s); %s", ip, allowPrivateHint)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("url host %q does not resolve", host)
	}
	for _, a := range addrs {
		if !publicAddr(a) {
			return fmt.Errorf("url host %q resolves to a non-public address (%s); %s", host, a.Unmap(), allowPrivateHint)
		}
	}
	return nil
}

// guardDial is a net.Dialer Control function that refuses non-public
// addresses at connect time, after DNS, so a name that changes its answer
// (DNS rebinding) cannot reach inside.
func guardDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook target %q: %w", address, err)
	}
	if !publicAddr(ap.Addr()) {
		return fmt.Errorf("webhook target %s is not a public address", ap.Addr().Unmap())
	}
	return nil
}
