// included by Used.h only
