/* tests/svg_check.c: what a reader of a chart relies on, read back from gnuplot's SVG output.
 *
 *   svg_check CHART.svg [--legend N] [-v]
 *
 * Checks and prints:
 *   - the legend: its entries (a plot element whose <title> is not gnuplot's default
 *     "gnuplot_plot_K" has one); with --legend N there must be exactly N; every entry inside the
 *     canvas and no two closer than a line of text;
 *   - the series' styles: colour with dash or fill pattern differ between every two series of
 *     the legend (-v prints them, markers too);
 *   - the x axis' tic labels (a label right below the tic it belongs to): none runs into the next
 *     — level labels side by side with their widths, rotated ones a line of text apart across
 *     their direction — and none reaches out of the canvas.
 * Text widths are taken at 6 px a character, the narrowest 10 pt sans (DejaVu) sets its digits
 * and capitals, and a line of text at 10 px, so that a collision reported is one a reader sees.
 * Exit 0 when all hold, 1 otherwise (each failure on stderr), 2 for a file it cannot read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAR_PX 6.0
#define TEXT_PX 10.0
#define MAX_ITEMS 4096

struct label {
	double x, y, angle;   /* translate(x,y) rotate(-angle): angle counter-clockwise, degrees */
	char anchor[8];       /* start, middle, end */
	char text[256];
};

struct series {
	char title[256];
	char style[256];      /* colour, dash, marker, pattern */
	double key_x, key_y;  /* its legend text */
	int has_key;
};

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		fclose(f);
		return NULL;
	}
	s[n] = '\0';
	fclose(f);
	return s;
}

/* The characters of the text of the <text> element starting at p (tags and entities skipped). */
static void text_of(const char *p, char *out, size_t n)
{
	const char *end = strstr(p, "</text>");
	size_t k = 0;
	int in_tag = 0;
	for (; p < end && k + 1 < n; p++) {
		if (*p == '<')
			in_tag = 1;
		else if (*p == '>')
			in_tag = 0;
		else if (!in_tag)
			out[k++] = *p == '&' ? '?' : *p;
		if (*p == '&')
			while (p < end && *p != ';')
				p++;
	}
	out[k] = '\0';
	/* gnuplot writes a leading space in some tspans */
	size_t lead = strspn(out, " ");
	memmove(out, out + lead, strlen(out + lead) + 1);
}

static size_t chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* The value of attribute name (name='v' or name="v") in the tag at p, into out. */
static int attr(const char *p, const char *tag_end, const char *name, char *out, size_t n)
{
	char pat[64];
	snprintf(pat, sizeof(pat), " %s=", name);
	const char *a = strstr(p, pat);
	if (!a || a > tag_end)
		return 0;
	a += strlen(pat);
	char q = *a++;
	const char *e = strchr(a, q);
	if (!e)
		return 0;
	snprintf(out, n, "%.*s", (int)(e - a), a);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: svg_check CHART.svg [--legend N] [-v]\n");
		return 2;
	}
	long want_legend = -1;
	int verbose = 0;
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--legend") && i + 1 < argc)
			want_legend = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-v"))
			verbose = 1;
	char *svg = read_all(argv[1]);
	if (!svg) {
		fprintf(stderr, "svg_check: cannot read '%s'\n", argv[1]);
		return 2;
	}
	int failed = 0;
	double width = 0, height = 0;
	const char *root = strstr(svg, "<svg");
	char v[64];
	if (root && attr(root, strchr(root, '>'), "width", v, sizeof(v)))
		width = atof(v);
	if (root && attr(root, strchr(root, '>'), "height", v, sizeof(v)))
		height = atof(v);
	const char *vb = root ? strstr(root, "viewBox=\"") : NULL;   /* `svg dynamic` has only it */
	if (vb && vb < strchr(root, '>') && !(width > 0))
		sscanf(vb, "viewBox=\"%*f %*f %lf %lf", &width, &height);

	/* ---- the series and their legend entries ---- */
	static struct series series[MAX_ITEMS];
	size_t nseries = 0;
	for (const char *p = strstr(svg, "id=\"gnuplot_plot_"); p && nseries < MAX_ITEMS;
	     p = strstr(p + 1, "id=\"gnuplot_plot_")) {
		const char *next = strstr(p + 1, "id=\"gnuplot_plot_");
		const char *group_end = next ? next : svg + strlen(svg);
		const char *t = strstr(p, "<title>");
		if (!t || t > group_end)
			continue;
		struct series *s = &series[nseries];
		memset(s, 0, sizeof(*s));
		const char *te = strstr(t, "</title>");
		snprintf(s->title, sizeof(s->title), "%.*s", (int)(te - t - 7), t + 7);
		if (!strncmp(s->title, "gnuplot_plot_", 13))
			continue;   /* no legend entry: notitle */
		/* the legend's text: the first text group of the element */
		const char *g = strstr(te, "<g transform=\"translate(");
		if (g && g < group_end) {
			s->has_key = sscanf(g, "<g transform=\"translate(%lf,%lf)", &s->key_x, &s->key_y) == 2;
		}
		/* the style: the first colour after the key, dash, marker and pattern */
		char colour[64] = "", dash[64] = "-", marker[32] = "-", pattern[32] = "-";
		const char *after = g && g < group_end ? strstr(g, "</g>") : te;
		/* the first colour a stroke, fill or marker of the element's key sample has */
		for (const char *q = after; q && q < group_end && !colour[0]; q++)
			if (!strncmp(q, "rgb(", 4) && (!strncmp(q - 8, "stroke='", 8) ||
						       !strncmp(q - 7, "color='", 7) ||
						       !strncmp(q - 8, "fill = '", 8)))
				sscanf(q + 4, "%63[^)]", colour);
		const char *d = strstr(after, "stroke-dasharray");
		if (d && d < group_end)
			sscanf(d + 17, "%*c%63[^'\"]", dash);
		const char *m = strstr(after, "xlink:href='#gpPt");
		if (m && m < group_end)
			sscanf(m, "xlink:href='#gpPt%31[0-9]", marker);
		const char *pt = strstr(after, "url(#gpPat");
		if (pt && pt < group_end)
			sscanf(pt, "url(#gpPat%31[0-9]", pattern);
		/* what tells two series apart at a glance: colour with dash or fill pattern (a
		 * marker, a few pixels, does not; it is printed, not compared) */
		snprintf(s->style, sizeof(s->style), "colour %s dash %s pattern %s", colour, dash,
			 pattern);
		if (verbose)
			printf("  %s: %s marker %s\n", s->title, s->style, marker);
		nseries++;
	}
	printf("%s: %.0fx%.0f, %zu legend entries\n", argv[1], width, height, nseries);
	if (want_legend >= 0 && (long)nseries != want_legend) {
		fprintf(stderr, "FAIL legend: %zu entries, want %ld\n", nseries, want_legend);
		failed = 1;
	}
	for (size_t i = 0; i < nseries; i++) {
		const struct series *s = &series[i];
		if (!s->has_key || s->key_y < 0 || s->key_y > height || s->key_x < 0 ||
		    s->key_x + CHAR_PX * (double)chars(s->title) > width + 1) {
			fprintf(stderr, "FAIL legend entry '%s' at (%.1f, %.1f) is outside the %.0fx%.0f "
					"canvas\n", s->title, s->key_x, s->key_y, width, height);
			failed = 1;
		}
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(series[j].style, s->style)) {
				fprintf(stderr, "FAIL series '%s' and '%s' look alike (%s)\n", series[j].title,
					s->title, s->style);
				failed = 1;
			}
			if (s->has_key && series[j].has_key && fabs(series[j].key_x - s->key_x) < 1 &&
			    fabs(series[j].key_y - s->key_y) < TEXT_PX) {
				fprintf(stderr, "FAIL legend entries '%s' and '%s' overlap\n", series[j].title,
					s->title);
				failed = 1;
			}
		}
	}

	/* ---- the x axis' tic labels: a text group right after the path of its tic ---- */
	static struct label labels[MAX_ITEMS];
	size_t nlabels = 0;
	for (const char *p = strstr(svg, "<path stroke='black'  d='M"); p && nlabels < MAX_ITEMS;
	     p = strstr(p + 1, "<path stroke='black'  d='M")) {
		double x0, y0;
		if (sscanf(p, "<path stroke='black'  d='M%lf,%lf", &x0, &y0) != 2)
			continue;
		const char *line_end = strchr(p, '\n');
		const char *g = strstr(p, "<g transform=\"translate(");
		if (!g || (line_end && g > line_end))
			continue;
		struct label *l = &labels[nlabels];
		memset(l, 0, sizeof(*l));
		if (sscanf(g, "<g transform=\"translate(%lf,%lf)", &l->x, &l->y) != 2)
			continue;
		if (fabs(l->x - x0) > 5 || l->y <= y0)
			continue;   /* a y tic's label, or not a tic's */
		const char *r = strstr(g, "rotate(");
		const char *tag_end = strchr(g, '>');
		if (r && r < tag_end)
			l->angle = -atof(r + 7);
		attr(g, tag_end, "text-anchor", l->anchor, sizeof(l->anchor));
		const char *text = strstr(g, "<text");
		if (!text)
			continue;
		text_of(strchr(text, '>') + 1, l->text, sizeof(l->text));
		if (l->text[0])
			nlabels++;
	}
	double angle = nlabels ? labels[0].angle : 0;
	printf("%zu x tic labels, at %.0f degrees\n", nlabels, angle);
	for (size_t i = 0; i < nlabels; i++) {
		const struct label *l = &labels[i];
		double w = CHAR_PX * (double)chars(l->text), a = l->angle * M_PI / 180;
		/* the far end of the text from its anchor, going down-left for a right-aligned one */
		double reach_x = !strcmp(l->anchor, "end") ? -w * cos(a) : !strcmp(l->anchor, "middle") ?
			-w / 2 * cos(a) : 0;
		double reach_y = !strcmp(l->anchor, "end") ? w * sin(a) : !strcmp(l->anchor, "middle") ?
			w / 2 * sin(a) : 0;
		if (l->x + reach_x < 0 || l->y + reach_y > height) {
			fprintf(stderr, "FAIL x label '%s' reaches out of the canvas (to %.0f, %.0f)\n",
				l->text, l->x + reach_x, l->y + reach_y);
			failed = 1;
		}
		if (i == 0)
			continue;
		const struct label *k = &labels[i - 1];
		double dx = fabs(l->x - k->x);
		int overlap;
		if (fabs(l->angle) < 1)   /* side by side: half of each width apart (centred) */
			overlap = dx < (CHAR_PX * (double)(chars(l->text) + chars(k->text))) / 2;
		else   /* parallel: their distance across the text's direction is dx sin(angle) */
			overlap = dx * fabs(sin(a)) < TEXT_PX;
		if (overlap) {
			fprintf(stderr, "FAIL x labels '%s' and '%s' run into each other (%.1f px apart at "
					"%.0f degrees)\n", k->text, l->text, dx, l->angle);
			failed = 1;
		}
	}
	free(svg);
	return failed;
}
