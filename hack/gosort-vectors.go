// Generator of the test vectors of cli/src/gosort.rs: go run hack/gosort-vectors.go
//go:build ignore

package main

import (
	"fmt"
	"sort"
	"strings"
)

// Prints, for each case, the permutation sort.Slice leaves (original indices) for keys; less = key[i] > key[j].
func main() {
	cases := [][]int{}
	for n := 13; n <= 50; n++ {
		k := make([]int, n)
		cases = append(cases, k) // all equal
	}
	// pseudo-random keys, small range (many ties)
	seed := uint32(12345)
	rnd := func() uint32 { seed = seed*1103515245 + 12345; return (seed >> 16) & 0x7fff }
	for _, n := range []int{13, 20, 33, 50, 64, 100, 200} {
		k := make([]int, n)
		for i := range k {
			k[i] = int(rnd() % 5)
		}
		cases = append(cases, k)
	}
	for _, n := range []int{60, 128} { // descending-ish and ascending keys
		k := make([]int, n)
		for i := range k {
			k[i] = i % 7
		}
		cases = append(cases, k)
	}
	for _, keys := range cases {
		idx := make([]int, len(keys))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return keys[idx[a]] > keys[idx[b]] })
		ks := make([]string, len(keys))
		for i, v := range keys {
			ks[i] = fmt.Sprint(v)
		}
		is := make([]string, len(idx))
		for i, v := range idx {
			is[i] = fmt.Sprint(v)
		}
		fmt.Printf("(&[%s], &[%s]),\n", strings.Join(ks, ","), strings.Join(is, ","))
	}
}
