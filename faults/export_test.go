package faults

// TryDeadlinePad is tryDeadlinePad, for the test that holds it to
// client.TryDeadlinePad.
const TryDeadlinePad = tryDeadlinePad
