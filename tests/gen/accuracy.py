# The data of tests/accuracy.rs for NumPy (its xorshift64* stream), and NumPy's own error on it
# against exact (Fraction) references: the origin of the bounds stated there.
import numpy as np
from fractions import Fraction
M=2**64
def units(seed,n):
    s=seed|1; out=np.empty(n)
    for i in range(n):
        s^=s>>12; s^=(s<<25)%M; s^=s>>27
        out[i]=((s*0x2545F4914F6CDD1D)%M >> 11)/2**53
    return out
x=1e9+units(0x5eed,10**6)*1000.0

exact=sum(Fraction(v) for v in x)
def ulps(v,ex):
    return abs(Fraction(v)-ex)/Fraction(np.spacing(float(ex)))
print("numpy sum ulps", float(ulps(np.sum(x),exact)), "exact", float(exact))
y=1e12+units(0xface,10**5)*1000.0

n=len(y); m=sum(Fraction(v) for v in y)/n
ev=sum((Fraction(v)-m)**2 for v in y)/n
nv=np.var(y)
print("numpy var rel err", float(abs(Fraction(nv)-ev)/ev), "exact", float(ev))

