package org.restack.corpus;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;

final class JacksonScenarios {
  private JacksonScenarios() {}

  static void addTo(List<Runnable> scenarios) {
    ObjectMapper mapper = new ObjectMapper();
    scenarios.add(() -> call(() -> mapper.readTree("{\"a\": [1, 2,, 3]}")));
    scenarios.add(() -> call(() -> mapper.readValue("{\"name\":\"n\",\"extra\":1}", Bean.class)));
    scenarios.add(() -> call(() -> mapper.readValue("\"x\"", Integer.class)));
    scenarios.add(() -> call(() -> mapper.writeValueAsString(new Failing())));
    scenarios.add(() -> call(() -> mapper.readValue("[1,2", int[].class)));
    scenarios.add(() -> call(() -> mapper.writeValueAsString(new Object())));
    scenarios.add(() -> call(() -> mapper.convertValue("abc", Map.class)));
    scenarios.add(() -> call(JacksonScenarios::streamTokens));
    scenarios.add(() -> call(() -> mapper.readValue("{\"name\":\"\"}", Bean.class)));
  }

  interface Call {
    Object run() throws Exception;
  }

  static void call(Call call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("jackson call failed", e);
    }
  }

  static Object streamTokens() throws Exception {
    JsonParser parser = new JsonFactory().createParser("{\"a\": tru}");
    while (parser.nextToken() != null) {}
    return null;
  }

  public static class Bean {
    private String name;

    public String getName() {
      return name;
    }

    public void setName(String name) {
      if (name.isEmpty()) throw new IllegalArgumentException("empty name");
      this.name = name;
    }
  }

  public static class Failing {
    public String getValue() {
      throw new UnsupportedOperationException("no value");
    }
  }
}
