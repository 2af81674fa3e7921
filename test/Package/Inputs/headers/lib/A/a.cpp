#include "fly/A/Private.h"
#include "fly/A/Used.h"
