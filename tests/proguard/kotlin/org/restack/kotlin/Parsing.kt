@file:JvmName("Configs")

package org.restack.kotlin

// Configuration parsing: sealed classes and when, enums, lateinit, lazy, !!, as, error(), TODO().
sealed class Token {
  data class Key(val name: String) : Token()

  data class Value(val text: String) : Token()

  object End : Token()
}

enum class Mode { STRICT, LENIENT }

fun describe(token: Token): String =
    when (token) {
      is Token.Key -> "key ${token.name}"
      is Token.Value -> "value ${token.text}"
      Token.End -> error("the end token has no description")
    }

fun parseMode(name: String): Mode = Mode.valueOf(name.uppercase())

fun tokenize(text: String): List<Token> =
    text.split(';').filter { it.isNotBlank() }.flatMap { part ->
      val pair = part.split('=').takeIf { it.size == 2 }
      listOf(Token.Key(part.substringBefore('=')), Token.Value(pair?.get(1)!!))
    }

class Settings {
  lateinit var path: String

  val cacheSize: Int by lazy { computeCacheSize() }

  private fun computeCacheSize(): Int = System.getProperty("restack.cache.size", "64m").toInt()

  fun port(values: Map<String, Any>): Int {
    val raw = values.getValue("port")
    return raw as Int
  }

  fun loadYaml(text: String): Map<String, String> = TODO("YAML settings ($text)")
}
