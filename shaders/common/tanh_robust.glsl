// tanh_robust(x), shared by the additive scoring kernels (additive.comp,
// additive_backward.comp).
// tanh with a few ulp of relative error for every finite x, independent of the
// driver's tanh (whose precision Vulkan only inherits from sinh/cosh, and which
// some implementations compute as (e^2x - 1)/(e^2x + 1): inf/inf = NaN past
// |x| ~ 44). Near 0, 1 - 2/(e^2x + 1) would cancel, so |x| < 0.625 uses the
// Taylor series of tanh(x)/x in x^2 through x^16 (the first omitted term is
// < 0.6 ulp at 0.625; 2.4 ulp max measured for this fp32 evaluation against
// double on the host). Elsewhere the result is >= 0.55, the subtraction
// loses nothing, and a relative exp error of e costs at most 0.62 e (less as
// |x| grows). |x| is capped at 20 (tanh(20) rounds to exactly 1 in fp32) so
// that exp never overflows: a compiler may assume no inf occurs.
float tanh_robust(float x)
{
    float a = abs(x);
    float t = a * a;
    float poly = 6404582.0 / 10854718875.0;
    poly = fma(poly, t, -929569.0 / 638512875.0);
    poly = fma(poly, t, 21844.0 / 6081075.0);
    poly = fma(poly, t, -1382.0 / 155925.0);
    poly = fma(poly, t, 62.0 / 2835.0);
    poly = fma(poly, t, -17.0 / 315.0);
    poly = fma(poly, t, 2.0 / 15.0);
    poly = fma(poly, t, -1.0 / 3.0);
    poly = fma(poly, t, 1.0);
    float r = a < 0.625 ? a * poly : 1.0 - 2.0 / (exp(2.0 * min(a, 20.0)) + 1.0);
    return x < 0.0 ? -r : r;
}
