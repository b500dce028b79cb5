/* test_listnav.c — a view's cursor over a list (ui/listnav.h): moving clamps at both ends
 * and on an empty list, a shrunken list pulls the cursor back on its last item, wrapping
 * goes round both ways and leaves the cursor alone on an empty list, and the page of a
 * cursor (its first item, number and the page count) at page boundaries. */
#include "check.h"
#include "listnav.h"

int main(void)
{
    CHECK(listnav_move(0, -1, 5) == 0 && listnav_move(4, 1, 5) == 4, "clamped at the ends");
    CHECK(listnav_move(2, 1, 5) == 3 && listnav_move(2, -2, 5) == 0, "moved within");
    CHECK(listnav_move(1, -4, 5) == 0 && listnav_move(3, 4, 5) == 4, "a grid row's step "
          "past an end stops on the end");
    CHECK(listnav_move(0, 0, 0) == 0 && listnav_move(3, 1, 0) == 0 &&
          listnav_move(0, -1, 0) == 0, "an empty list: 0");
    CHECK(listnav_move(9, 0, 4) == 3, "a list that shrank: its last item");
    CHECK(listnav_wrap(0, -1, 3) == 2 && listnav_wrap(2, 1, 3) == 0 &&
          listnav_wrap(1, 1, 3) == 2, "wraps both ways: %d %d", listnav_wrap(0, -1, 3),
          listnav_wrap(2, 1, 3));
    CHECK(listnav_wrap(0, 1, 1) == 0 && listnav_wrap(4, 1, 0) == 4 &&
          listnav_wrap(4, -1, -1) == 4, "one item stays; none: as it was");
    int page = 0, pages = 0;
    CHECK(listnav_page(0, 6, 13, &page, &pages) == 0 && page == 1 && pages == 3, "first page");
    CHECK(listnav_page(5, 6, 13, &page, &pages) == 0 && page == 1, "the last of page 1");
    CHECK(listnav_page(6, 6, 13, &page, &pages) == 6 && page == 2, "the first of page 2");
    CHECK(listnav_page(12, 6, 13, &page, &pages) == 12 && page == 3 && pages == 3,
          "the last page holds one item");
    CHECK(listnav_page(11, 6, 12, NULL, &pages) == 6 && pages == 2 &&
          listnav_page(3, 1, 4, &page, NULL) == 3 && page == 4, "exact pages; one per page");
    return check_summary();
}
