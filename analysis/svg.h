/* svg: the little SVG a report needs (axes with ticks, rectangles, lines, text), written
 * directly so that a report is self-contained, deterministic and made without any tool
 * outside trainsim. Output is well-formed XML, so it embeds in XHTML as well as HTML.
 *
 * A frame maps data coordinates onto a plot area in pixels; either axis may be logarithmic
 * (base 2, for GPU counts and speed-ups).
 *
 *   (x0, y0) +-------------------+
 *            |  plot area  w x h |   y grows upwards in data, downwards in pixels
 *            +-------------------+
 */
#ifndef TS_SVG_H
#define TS_SVG_H

#include <stdbool.h>
#include <stdio.h>

typedef struct ts_svg_frame {
  double x0_px, y0_px, w_px, h_px; /* plot area: top-left corner and size */
  double x_lo, x_hi, y_lo, y_hi; /* data range shown */
  bool is_x_log2, is_y_log2;
} ts_svg_frame;

/* Pixel coordinates of data values in frame f. */
double ts_svg_x(const ts_svg_frame *f, double x);
double ts_svg_y(const ts_svg_frame *f, double y);

/* Opens an <svg> of width x height pixels titled `title` (its accessible name). */
void ts_svg_open(FILE *out, int width_px, int height_px, const char *title);
void ts_svg_close(FILE *out);

/* Writes text with the XML special characters escaped. */
void ts_svg_escape(FILE *out, const char *text);
/* Text at (x, y); anchor is "start", "middle" or "end"; cls a CSS class or NULL. */
void ts_svg_text(FILE *out, double x_px, double y_px, const char *anchor, const char *cls,
                 const char *text);
/* A filled rectangle; tooltip (shown on hover) may be NULL. */
void ts_svg_rect(FILE *out, double x_px, double y_px, double w_px, double h_px, const char *fill,
                 const char *tooltip);
void ts_svg_line(FILE *out, double x1_px, double y1_px, double x2_px, double y2_px,
                 const char *stroke, double width_px, bool is_dashed);

/* Up to max_ticks "nice" ticks (1, 2 or 5 x 10^k apart) covering [lo, hi]; returns how many
 * were written to ticks. For a log2 axis, the powers of two in [lo, hi]. */
int ts_svg_ticks(double lo, double hi, bool is_log2, double *ticks, int max_ticks);
/* A "nice" upper bound for an axis starting at 0 that must show hi. */
double ts_svg_nice_max(double hi);

/* The frame's box, grid lines and tick labels at the given ticks, and the axis titles. */
void ts_svg_axes(FILE *out, const ts_svg_frame *f, const double *x_ticks, int n_x_ticks,
                 const double *y_ticks, int n_y_ticks, const char *x_title, const char *y_title);

/* A legend entry: a swatch and its label at (x, y). */
void ts_svg_legend_item(FILE *out, double x_px, double y_px, const char *fill, const char *label);

#endif
