/* listnav.h — a view's cursor over a list of n items (ui/listnav.c): moved by a step and
 * kept on an item (clamped, or wrapping around), and the page of a paged grid that holds
 * it. Pure arithmetic on ints: no drawing, no state (the views keep their cursors), no
 * curses. The tables' own scrolling is the table widget's (table.c). */
#ifndef LM_LISTNAV_H
#define LM_LISTNAV_H

/* sel moved by delta, kept within [0, n - 1]: 0 when the list is empty. */
int listnav_move(int sel, int delta, int n);

/* sel moved by delta, wrapping around the n items (the last's next is the first); sel as
 * it is when n <= 0. */
int listnav_wrap(int sel, int delta, int n);

/* The page of per items (per >= 1) that holds the cursor sel: its first item; its number
 * from 1 into *page and how many pages n items make into *pages, each when not NULL. */
int listnav_page(int sel, int per, int n, int *page, int *pages);

#endif
