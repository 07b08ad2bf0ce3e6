#ifndef OPENSTOREKIT_CLIBPQ_SHIM_H
#define OPENSTOREKIT_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
