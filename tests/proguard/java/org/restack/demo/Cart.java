package org.restack.demo;

class Cart {
  private final int items;

  Cart(int items) {
    this.items = items;
  }

  void checkout(int coupon) {
    int price = price(coupon);
    System.out.println("price " + price);
  }

  private int price(int coupon) {
    return base() - discount(coupon);
  }

  private int base() {
    return items * 10;
  }

  private static int discount(int coupon) {
    if (coupon <= 0) {
      throw new IllegalArgumentException("coupon " + coupon);
    }
    return coupon;
  }

  int total() {
    return 100 / items;
  }
}
