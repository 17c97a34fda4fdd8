# output/: the renderers rank and prices share (terminal-safe text, the SVG chart's scales).
# Untrusted text (names from result files, price files, the cache, IMDS, the machine) reaches the
# terminal escaped: the helper, the table writers, warnings, errors and measure's summary.
instbench_add_unit_test(output_untrusted_text ${CMAKE_CURRENT_LIST_DIR}/output_untrusted_text.c)
# The chart's scales (log past a decade, read back through its own ticks), label collisions and
# degenerate inputs; svg_plot_cases renders what rank never hands the writer (zero, NaN prices).
add_executable(svg_plot_cases ${CMAKE_CURRENT_LIST_DIR}/svg_plot_cases.c)
target_link_libraries(svg_plot_cases PRIVATE instbench_core)
add_test(NAME svg_plot COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/svg_plot.py ${INSTBENCH_BIN}
         $<TARGET_FILE:svg_plot_cases>)
