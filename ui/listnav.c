/* listnav.c — a view's cursor over a list (listnav.h): the grid's, the sweep's trial and
 * the per-token view's layer. Not drawing and not the table widget's scrolling. */
#include "listnav.h"

int listnav_move(int sel, int delta, int n)
{
    sel += delta;
    if (sel >= n) sel = n - 1;
    return sel < 0 ? 0 : sel;
}

int listnav_wrap(int sel, int delta, int n)
{
    return n > 0 ? ((sel + delta) % n + n) % n : sel;
}

int listnav_page(int sel, int per, int n, int *page, int *pages)
{
    int first = (sel / per) * per;
    if (page) *page = first / per + 1;
    if (pages) *pages = (n + per - 1) / per;
    return first;
}
