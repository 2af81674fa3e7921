#include "fly/A/Inner.h"
