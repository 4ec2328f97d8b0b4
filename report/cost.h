/* report/cost.h: what a benchmark costs — a price per device-hour (--price USD, or a `prices:`
 * table in a YAML file keyed by GPU name or `cpu`, --prices FILE) turned into cost per 1K samples
 * and per run. A GPU case is priced by its system's GPU name, a CPU case by `cpu`; --price is
 * the price of any device the table does not name. */
#ifndef BENCHDB_COST_H
#define BENCHDB_COST_H

#include "db.h"
#include "error.h"

struct price_entry {
	char *device;        /* a GPU name as `runner sysinfo` shows it, or "cpu" */
	double usd_per_hour;
};

struct prices {
	struct price_entry *entries;
	size_t n;
	double fallback;     /* --price; < 0 when not given */
};

/* Read a YAML file holding `prices: {NAME: USD per hour, ...}` into *out (added to it). BD_EIO,
 * or BD_EINVAL with the file, line and key of what is wrong. */
int prices_load(const char *path, struct prices *out, struct bd_error *err);
/* USD per hour of device ("" or NULL: "cpu"): the table's entry, else the fallback; -1 when
 * neither gives one. */
int prices_lookup(const struct prices *p, const char *device, double *usd_per_hour);
void prices_free(struct prices *p);
/* The device key a case is priced by: the GPU name of its system for a CUDA case, "cpu"
 * otherwise (into out). */
int prices_device(struct db *db, int64_t run_id, const char *case_device, char *out, size_t n,
		  struct bd_error *err);

/* USD per 1,000 samples at samples_s samples per second on a device of usd_per_hour. */
double cost_per_1k_samples(double usd_per_hour, double samples_s);
/* USD for ns nanoseconds of a device. */
double cost_of_ns(double usd_per_hour, double ns);

struct case_set;
struct table;
/* `report compare`'s and writeup's cost table of the ok cases of set: per case the device it is
 * priced by, USD per hour, samples/s (batch_size / median iteration time of pick, as report
 * nodes), cost per 1K samples and the case's cost (its wall time, setup included), and a mark
 * column where a case is contended or unstable (case_mark_of); the notes give
 * the run's cost (every case's wall time) and name the devices without a price. t is initialised
 * even on failure. */
int cost_table(struct db *db, const struct case_set *set, const struct prices *p, int pick,
	       const char *title, struct table *t, struct bd_error *err);

/* The commands' --price and --prices options. */
#define REPORT_OPT_PRICE(dest)                                                                     \
	{"price", 0, OPT_STRING, "USD", "price of a device-hour, for cost columns (any device)", dest}
#define REPORT_OPT_PRICES(dest)                                                                    \
	{"prices", 0, OPT_STRING, "FILE",                                                          \
	 "YAML `prices:` table of USD per device-hour, keyed by GPU name or cpu", dest}
/* From the options (price: --price's text, NULL when not given): *out is NULL when neither was
 * given. Prints a problem for `report command` and returns the exit status; -1 when the command
 * should go on. */
int prices_load_options(const char *price, const char *path, const char *command,
			struct prices **out);

#endif
