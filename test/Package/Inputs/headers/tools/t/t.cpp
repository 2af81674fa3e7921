#include "fly/A/Used.h"
