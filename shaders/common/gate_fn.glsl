// Keras use_gate's sigmoid, shared by gate*.comp and gate_backward*.comp:
// 1 / (1 + exp(-g)); exp overflows to inf for g < -88 and the quotient is
// then exactly 0, Keras's limit; never NaN for a finite g.
float vka_sigmoid(float g) { return 1.0 / (1.0 + exp(-g)); }
