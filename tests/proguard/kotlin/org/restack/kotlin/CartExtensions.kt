package org.restack.kotlin

// Extension functions and properties of Cart, in their own file class (CartExtensionsKt).
private val coupons = mapOf("SPRING" to 10, "VIP" to 25)

fun Cart.checkout(coupon: String? = null, express: Boolean = false): Long {
  coupon?.let { code -> discountPercent = couponPercent(code) }
  return total + if (express) 500 else 0
}

private fun couponPercent(code: String): Int =
    coupons[code] ?: throw NoSuchElementException("unknown coupon $code")

val Cart.isBig: Boolean
  get() = total > 10_000
