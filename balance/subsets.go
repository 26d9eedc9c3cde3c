package balance

import "strconv"

// Consistent hashing onto subsets (upstream-hash-by-subset), as
// ingress-nginx's chashsubset balancer does it
// (rootfs/etc/nginx/lua/balancer/chashsubset.lua): the endpoints, in their
// order, are cut into ceil(n/size) sets of size endpoints, the last one
// filled up again from the first endpoints so that every set has size
// members (chashsubset.lua:16-49); a key hashes onto a set by a ring over
// the sets' names ("set1", "set2", ...), and the request goes to one
// endpoint of that set. ingress-nginx draws that endpoint at random
// (chashsubset.lua:76-82); here the backend's cursor takes it round-robin,
// so every replica walks the same sequence and a subset's endpoints share
// its keys' requests evenly (SPEC §9).
type subsets struct {
	n, size int
	// ring places a key on a set: its points carry the set's index.
	ring *ring
}

func newSubsets(n, size int) *subsets {
	count := (n + size - 1) / size
	names := make([]string, count)
	for k := range names {
		names[k] = "set" + strconv.Itoa(k+1)
	}
	return &subsets{n: n, size: size, ring: newRing(names, nil)}
}

// member is the j-th endpoint of set k: the endpoints laid out in order
// and repeated from the first, cut every size, so no set is stored and a
// size far above the endpoint count costs nothing.
func (ss *subsets) member(k, j int) int { return (k*ss.size + j) % ss.n }

// subsetsFor returns the subsets for n endpoints in sets of size, reusing
// the ones last built for the backend while those numbers stay the same:
// the sets depend on nothing else.
func (r *Registry) subsetsFor(st *backendState, n, size int) *subsets {
	r.mu.Lock()
	ss := st.subsets
	r.mu.Unlock()
	if ss != nil && ss.n == n && ss.size == size {
		return ss
	}
	ss = newSubsets(n, size)
	r.mu.Lock()
	st.subsets = ss
	r.mu.Unlock()
	return ss
}

// inSubset picks for a key: the cursor's turn within the key's set, else
// (on a retry) the set's next untried member, else the next untried
// endpoint of the sets that follow on the ring.
func (b *Balancer) inSubset(key string, tried []Endpoint) int {
	ss := b.subsets
	points := ss.ring.points
	pos := ss.ring.search(hashString(key))
	turn := int((b.cursor.n.Add(1) - 1) % uint64(ss.size))
	for range points {
		k := int(uint32(points[pos]))
		for j := range min(ss.size, ss.n) {
			i := ss.member(k, (turn+j)%ss.size)
			if len(tried) == 0 || !isTried(b.endpoints[i].inflight, tried) {
				return i
			}
		}
		if pos++; pos == len(points) {
			pos = 0
		}
	}
	return -1
}
