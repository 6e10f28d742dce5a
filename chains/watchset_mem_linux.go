package chains

import "syscall"

// allocSlots returns n zeroed bytes outside the garbage-collected heap: a
// table of millions of keys holds no pointers, and on the heap it would
// double the collector's heap goal (and so the daemon's resident memory).
func allocSlots(n int) []byte {
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		// Out of address space is out of memory, as make would be.
		panic("chains: watched set: mmap: " + err.Error())
	}
	// Huge pages spare a TLB miss per lookup in a table of hundreds of
	// megabytes; where the kernel refuses, small pages work the same.
	_ = syscall.Madvise(mem, syscall.MADV_HUGEPAGE)
	return mem
}

// freeSlots returns memory from allocSlots to the system.
func freeSlots(mem []byte) {
	if err := syscall.Munmap(mem); err != nil {
		panic("chains: watched set: munmap: " + err.Error())
	}
}
