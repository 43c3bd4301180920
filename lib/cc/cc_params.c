/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* DCQCN's parameters by name: their table, defaults and range checks. */

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "droce_cc.h"
#include "droce_core.h"

static const struct droce_dcqcn_param_desc descs[] = {
#define RP(name, d, lo, hi, u, w) \
	{ #name, d, lo, hi, u, w, false, offsetof(struct droce_dcqcn_params, name) },
#define NP(name, d, lo, hi, u, w) \
	{ #name, d, lo, hi, u, w, true, offsetof(struct droce_dcqcn_params, name) },
	DROCE_DCQCN_RP_PARAMS(RP)
	DROCE_DCQCN_NP_PARAMS(NP)
#undef RP
#undef NP
};

const struct droce_dcqcn_param_desc *
droce_dcqcn_param_descs(unsigned int *n_out)
{
	*n_out = DROCE_DIM(descs);
	return descs;
}

static uint32_t *
field(struct droce_dcqcn_params *p, const struct droce_dcqcn_param_desc *d)
{
	return (uint32_t *)(void *)((char *)p + d->offset);
}

void
droce_dcqcn_params_default(struct droce_dcqcn_params *p)
{
	unsigned int i;

	for (i = 0; i < DROCE_DIM(descs); i++)
		*field(p, &descs[i]) = descs[i].def;
}

static const struct droce_dcqcn_param_desc *
find(const char *name)
{
	unsigned int i;

	for (i = 0; i < DROCE_DIM(descs); i++)
		if (strcmp(descs[i].name, name) == 0)
			return &descs[i];
	return NULL;
}

int
droce_dcqcn_param_set(struct droce_dcqcn_params *p, const char *name, uint64_t value)
{
	const struct droce_dcqcn_param_desc *d = find(name);

	if (d == NULL)
		return -ENOENT;
	if (value < d->min || value > d->max)
		return -ERANGE;
	*field(p, d) = (uint32_t)value;
	return 0;
}

int
droce_dcqcn_param_get(const struct droce_dcqcn_params *p, const char *name, uint32_t *value)
{
	const struct droce_dcqcn_param_desc *d = find(name);

	if (d == NULL)
		return -ENOENT;
	*value = *field((struct droce_dcqcn_params *)(uintptr_t)p, d);
	return 0;
}
