package store

// TakeDerivedManySQL is takeDerivedManySQL, for
// TestTakingAddressesKeepsItsCachedPlan.
var TakeDerivedManySQL = takeDerivedManySQL
